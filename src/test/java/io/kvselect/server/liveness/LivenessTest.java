package io.kvselect.server.liveness;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.MainVerticle;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.events.RankStats;
import io.kvselect.testing.Deployed;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * {@code --liveness-grace-secs} with real JeroMQ publishers on 127.0.0.1: a worker whose publisher
 * stops becomes unschedulable after the grace period and gets no selections; when the publisher
 * comes back on the same port it is schedulable again; with liveness off nothing changes.
 */
class LivenessTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private KvselectNode node;

  /** An engine's KV-event publisher: a PUB socket that can stop and start again on the same port. */
  static final class Publisher implements AutoCloseable {
    private final ZMQ.Context context = ZMQ.context(1);
    private ZMQ.Socket pub;
    final int port;

    Publisher() {
      pub = context.socket(SocketType.PUB);
      pub.setLinger(0);
      port = pub.bindToRandomPort("tcp://127.0.0.1");
    }

    String endpoint() {
      return "tcp://127.0.0.1:" + port;
    }

    void stop() {
      pub.close();
      pub = null;
    }

    /** Binds again on the same port (retried while the old listener is still being torn down). */
    void restart() {
      await()
          .atMost(20, TimeUnit.SECONDS)
          .ignoreExceptions()
          .until(
              () -> {
                ZMQ.Socket s = context.socket(SocketType.PUB);
                s.setLinger(0);
                try {
                  s.bind(endpoint());
                } catch (RuntimeException e) {
                  s.close();
                  throw e;
                }
                pub = s;
                return true;
              });
    }

    @Override
    public void close() {
      if (pub != null) {
        pub.close();
      }
      context.close();
    }
  }

  @AfterEach
  void stopAll() throws Exception {
    if (node != null) {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    for (AutoCloseable c : closeables) {
      c.close();
    }
  }

  private void start(String... flags) throws Exception {
    List<String> args =
        new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0", "--threads", "1"));
    args.addAll(List.of(flags));
    NodeSettings s = NodeSettings.parse(args.toArray(String[]::new), Map.of());
    node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
  }

  private Publisher publisher() {
    Publisher p = new Publisher();
    closeables.add(p);
    return p;
  }

  private HttpResponse<String> call(String method, String path, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
            .timeout(Duration.ofSeconds(20));
    if (body != null) {
      b.header("content-type", "application/json");
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Registers worker {@code id}; returns the lifecycle the answer reports. */
  private String register(long id, String eventsEndpoint) throws Exception {
    HttpResponse<String> r =
        call(
            "POST",
            "/workers",
            "{\"worker_id\": "
                + id
                + ", \"endpoint\": \"http://w"
                + id
                + "\", \"block_size\": 4, \"kv_events_endpoint\": \""
                + eventsEndpoint
                + "\"}");
    assertEquals(201, r.statusCode(), r.body());
    return JSON.readTree(r.body()).path("lifecycle").asText();
  }

  private boolean connected(long id) {
    return !node.events().unreachableSince().containsKey(new WorkerRank(id, 0));
  }

  private Lifecycle lifecycle(long id) {
    return node.service().worker(id).lifecycle();
  }

  /** The workers chosen by {@code n} selections of distinct prompts. */
  private List<Long> selections(int n) throws Exception {
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      HttpResponse<String> r =
          call(
              "POST",
              "/select",
              "{\"token_ids\": ["
                  + (i * 8)
                  + ", "
                  + (i * 8 + 1)
                  + ", "
                  + (i * 8 + 2)
                  + ", "
                  + (i * 8 + 3)
                  + "]}");
      assertEquals(200, r.statusCode(), r.body());
      out.add(JSON.readTree(r.body()).get("worker_id").asLong());
    }
    return out;
  }

  @Test
  void aStoppedPublisherMakesItsWorkerUnschedulableAfterTheGraceAndItsReturnUndoesIt()
      throws Exception {
    start("--liveness-grace-secs", "0.5");
    Publisher one = publisher();
    Publisher two = publisher();
    register(1, one.endpoint());
    register(2, two.endpoint());
    await().atMost(20, TimeUnit.SECONDS).until(() -> connected(1) && connected(2));
    assertEquals(Lifecycle.SCHEDULABLE, lifecycle(1));
    assertTrue(
        Deployed.verticles(node.vertx()).contains(LivenessVerticle.class.getSimpleName()),
        "the watcher is deployed");

    one.stop();
    await().atMost(20, TimeUnit.SECONDS).until(() -> lifecycle(1) == Lifecycle.UNSCHEDULABLE);
    WorkerRecord w = node.service().worker(1);
    assertEquals(
        List.of(
            "unreachable: no connection to the kv events endpoint "
                + one.endpoint()
                + " of dp_rank 0 for more than 0.5 s"),
        w.notSchedulableReasons());
    JsonNode listed = JSON.readTree(call("GET", "/workers", null).body());
    JsonNode first = listed.get(0).get("worker_id").asLong() == 1 ? listed.get(0) : listed.get(1);
    assertEquals("unschedulable", first.get("lifecycle").asText(), listed.toString());
    assertEquals(
        w.notSchedulableReasons().get(0), first.get("not_schedulable_reasons").get(0).asText());
    assertEquals(Lifecycle.SCHEDULABLE, lifecycle(2));
    assertEquals(
        List.of(2L, 2L, 2L, 2L, 2L, 2L, 2L, 2L, 2L, 2L),
        selections(10),
        "an unreachable worker was selected");
    assertEquals(200, call("GET", "/ready", null).statusCode());

    one.restart();
    await().atMost(20, TimeUnit.SECONDS).until(() -> lifecycle(1) == Lifecycle.SCHEDULABLE);
    assertEquals(List.of(), node.service().worker(1).notSchedulableReasons());
    assertEquals(200, call("DELETE", "/workers/2", null).statusCode());
    assertEquals(List.of(1L, 1L, 1L), selections(3), "the returned worker gets selections again");
  }

  @Test
  void aWorkerWhosePublisherNeverAnswersIsUnschedulableAfterTheGrace() throws Exception {
    start("--liveness-grace-secs", "0.3");
    Publisher gone = publisher();
    String endpoint = gone.endpoint();
    gone.stop();
    register(3, endpoint);
    await().atMost(20, TimeUnit.SECONDS).until(() -> lifecycle(3) == Lifecycle.UNSCHEDULABLE);
    assertEquals(503, call("POST", "/select", "{\"token_ids\": [1, 2, 3, 4]}").statusCode());
    assertEquals(503, call("GET", "/ready", null).statusCode());

    // a re-registration starts from schedulable; the watcher marks it again while the engine is
    // away
    // (read from the answer: the watcher may mark it again before a later read, 0.3 s grace)
    assertEquals("schedulable", register(3, endpoint));
    await().atMost(20, TimeUnit.SECONDS).until(() -> lifecycle(3) == Lifecycle.UNSCHEDULABLE);
  }

  @Test
  void withLivenessOffAnUnreachableWorkerStaysSchedulable() throws Exception {
    start();
    Publisher one = publisher();
    register(1, one.endpoint());
    await().atMost(20, TimeUnit.SECONDS).until(() -> connected(1));
    one.stop();
    // the listener sees the loss (retrying), and for much longer than any grace used above
    await()
        .atMost(20, TimeUnit.SECONDS)
        .until(
            () ->
                node.events().stats().get(new WorkerRank(1, 0)).state()
                    == RankStats.State.RETRYING);
    assertTrue(
        node.events().unreachableSince().containsKey(new WorkerRank(1, 0)), "the loss is seen");
    // nothing can take the worker out however long it stays away: with liveness off the node
    // deploys no watcher, the only code that marks a worker unreachable (no wall-clock wait needed)
    List<String> verticles = Deployed.verticles(node.vertx());
    assertFalse(verticles.contains(LivenessVerticle.class.getSimpleName()), verticles.toString());
    assertTrue(
        verticles.contains(MainVerticle.class.getSimpleName() + " (root)"), verticles.toString());
    assertEquals(Lifecycle.SCHEDULABLE, lifecycle(1));
    assertEquals(List.of(1L, 1L), selections(2));
  }
}
