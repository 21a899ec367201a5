package io.kvselect.server.events;

import static io.kvselect.server.events.EventNode.JSON;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.testing.Ports;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * KV-event endpoints of a registration: a malformed one is a 422 naming the field and changes
 * nothing; a host that does not resolve or a publisher that is not up yet is a normal state: the
 * worker is registered, its listener shows {@code retrying} with the last error (in
 * {@code GET /workers} and {@code /metrics}) and connects once the publisher is there.
 */
class KvEventsEndpointHttpTest {

  private EventNode node;
  private KvEventPublisher late;

  @BeforeEach
  void start() throws Exception {
    node = EventNode.start(2);
  }

  @AfterEach
  void stop() throws Exception {
    if (late != null) {
      late.close();
    }
    node.close();
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "POST|/workers|{\"worker_id\":1,\"endpoint\":\"http://w\",\"block_size\":4,\"kv_events_endpoint\":\"garbage\"}|kv_events_endpoint",
        "POST|/workers|{\"worker_id\":1,\"endpoint\":\"http://w\",\"block_size\":4,\"kv_events_endpoint\":\"tcp://127.0.0.1:9\",\"replay_endpoint\":\"7\"}|replay_endpoint",
        "POST|/workers|{\"worker_id\":2,\"endpoint\":\"http://w\",\"block_size\":4,\"kv_events_endpoint\":\"tcp://h:70000\"}|kv_events_endpoint",
        "POST|/workers|{\"worker_id\":2,\"endpoint\":\"http://w\",\"block_size\":4,\"data_parallel_size\":2,\"kv_events_endpoints\":{\"0\":\"tcp://h:1\",\"1\":\"tcp://h\"}}|kv_events_endpoints[1]",
        "PATCH|/workers/1|{\"replay_endpoint\":\"7\"}|replay_endpoint",
        "PATCH|/workers/1|{\"kv_events_endpoint\":\"ipc://\"}|kv_events_endpoint"
      })
  void aMalformedEndpointIs422NamingTheFieldAndChangesNothing(
      String method, String path, String body, String field) throws Exception {
    HttpResponse<String> first =
        node.send(
            "POST",
            "/workers",
            Map.of(
                "worker_id",
                1,
                "endpoint",
                "http://w",
                "block_size",
                4,
                "kv_events_endpoint",
                "tcp://127.0.0.1:" + Ports.free()));
    assertEquals(201, first.statusCode(), first.body());
    JsonNode before = catalog();

    HttpResponse<String> r = node.send(method, path, body);

    assertEquals(422, r.statusCode(), r.body());
    assertTrue(JSON.readTree(r.body()).get("error").asText().contains("`" + field + "`"), r.body());
    assertEquals(before, catalog(), "the catalog is unchanged");
  }

  @Test
  void anUnresolvableHostIsRegisteredAndItsListenerRetries() throws Exception {
    HttpResponse<String> r =
        node.send(
            "POST",
            "/workers",
            Map.of(
                "worker_id",
                7,
                "endpoint",
                "http://w",
                "block_size",
                4,
                "kv_events_endpoint",
                "tcp://nohost.invalid:5"));

    assertEquals(201, r.statusCode(), r.body());
    assertEquals("schedulable", JSON.readTree(r.body()).get("lifecycle").asText());
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              JsonNode l = node.listener(7, 0);
              assertEquals("retrying", l.get("state").asText(), l.toString());
              assertTrue(l.get("last_error").asText().contains("nohost.invalid"), l.toString());
              assertTrue(l.get("retries").asLong() >= 1, l.toString());
            });
    Pattern gauge =
        Pattern.compile(
            "(?m)^kvselect_kv_events_retrying\\{[^}]*dp_rank=\"0\"[^}]*worker_id=\"7\"[^}]*\\} 1\\.0$");
    String metrics = node.send("GET", "/metrics", null).body();
    assertTrue(
        gauge.matcher(metrics).find(),
        () ->
            metrics
                .lines()
                .filter(l -> l.startsWith("kvselect_kv_events_retrying"))
                .toList()
                .toString());
  }

  @Test
  void aPublisherThatIsNotUpYetIsRetriedAndPickedUpWhenItStarts() throws Exception {
    int port = Ports.free();
    HttpResponse<String> r =
        node.send(
            "POST",
            "/workers",
            Map.of(
                "worker_id",
                3,
                "endpoint",
                "http://w",
                "block_size",
                EventNode.BS,
                "kv_events_endpoint",
                "tcp://127.0.0.1:" + port));
    assertEquals(201, r.statusCode(), r.body());
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              JsonNode l = node.listener(3, 0);
              assertEquals("retrying", l.get("state").asText(), l.toString());
              assertTrue(l.get("last_error").asText().contains("127.0.0.1:" + port), l.toString());
            });

    late =
        new KvEventPublisher(
            "late-engine", "127.0.0.1", new int[] {port}, null, "", ReplayLayout.TOPIC);
    late.ready().get(10, TimeUnit.SECONDS);
    int[] prompt = EventNode.tokens(50, 8);
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              late.publish(0, EventNode.batch(0, EventNode.stored(prompt, 0, 2)));
              return node.depths(prompt).get("3:0") == 2;
            });
    JsonNode l = node.listener(3, 0);
    assertEquals("live", l.get("state").asText(), l.toString());
    assertTrue(l.get("last_error").isNull(), l.toString());
    late.publish(
        0,
        EventNode.batch(
            0, new BlockRemoved(new long[] {EventNode.chain(prompt)[1]}, "GPU", null, null)));
    await().atMost(Duration.ofSeconds(10)).until(() -> node.depths(prompt).get("3:0") == 1);
  }

  /** {@code GET /workers} without the listeners' live counters. */
  private JsonNode catalog() throws Exception {
    JsonNode all = node.json("GET", "/workers", null);
    for (JsonNode w : all) {
      ((ObjectNode) w).remove("kv_events");
    }
    return all;
  }
}
