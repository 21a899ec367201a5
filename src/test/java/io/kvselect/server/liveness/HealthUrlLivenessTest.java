package io.kvselect.server.liveness;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A worker's {@code health_url} (approximate mode, so health is the only signal): failing probes
 * for the grace period make it unschedulable, a healthy answer makes it schedulable again; the
 * field is validated and echoed by {@code GET /workers}.
 */
class HealthUrlLivenessTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final AtomicInteger status = new AtomicInteger(200);
  private HttpServer engine;
  private KvselectNode node;

  @BeforeEach
  void startEngine() throws Exception {
    engine = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    engine.createContext(
        "/health",
        ex -> {
          ex.sendResponseHeaders(status.get(), -1);
          ex.close();
        });
    engine.start();
  }

  @AfterEach
  void stop() throws Exception {
    if (node != null) {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    engine.stop(0);
  }

  private void start(String... flags) throws Exception {
    List<String> args = new java.util.ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0"));
    args.addAll(List.of(flags));
    NodeSettings s =
        NodeSettings.parse(
            args.toArray(String[]::new), Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
            .header("content-type", "application/json")
            .timeout(Duration.ofSeconds(20))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private String healthUrl() {
    return "http://127.0.0.1:" + engine.getAddress().getPort() + "/health";
  }

  @Test
  void failingProbesForTheGraceMakeTheWorkerUnschedulableUntilItIsHealthy() throws Exception {
    start("--liveness-grace-secs", "0.4");
    HttpResponse<String> r =
        post(
            "/workers",
            "{\"worker_id\": 1, \"endpoint\": \"http://w1\", \"block_size\": 4,"
                + " \"health_url\": \""
                + healthUrl()
                + "\"}");
    assertEquals(201, r.statusCode(), r.body());
    assertEquals(healthUrl(), JSON.readTree(r.body()).get("health_url").asText());
    assertEquals(200, post("/select", "{\"token_ids\": [1, 2, 3, 4]}").statusCode());

    status.set(503);
    await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> node.service().worker(1).lifecycle() == Lifecycle.UNSCHEDULABLE);
    assertEquals(
        List.of("unreachable: health check " + healthUrl() + " failing for more than 0.4 s"),
        node.service().worker(1).notSchedulableReasons());
    HttpResponse<String> refused = post("/select", "{\"token_ids\": [1, 2, 3, 4]}");
    assertEquals(503, refused.statusCode(), refused.body());

    status.set(200);
    await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> node.service().worker(1).lifecycle() == Lifecycle.SCHEDULABLE);
    assertEquals(200, post("/select", "{\"token_ids\": [1, 2, 3, 4]}").statusCode());

    engine.stop(0);
    await()
        .atMost(20, TimeUnit.SECONDS)
        .until(() -> node.service().worker(1).lifecycle() == Lifecycle.UNSCHEDULABLE);
  }

  @Test
  void withLivenessOffTheHealthUrlIsOnlyRecorded() throws Exception {
    start();
    status.set(500);
    assertEquals(
        201,
        post(
                "/workers",
                "{\"worker_id\": 1, \"endpoint\": \"http://w1\", \"block_size\": 4,"
                    + " \"health_url\": \""
                    + healthUrl()
                    + "\"}")
            .statusCode());
    assertEquals(Lifecycle.SCHEDULABLE, node.service().worker(1).lifecycle());
    assertEquals(200, post("/select", "{\"token_ids\": [1, 2, 3, 4]}").statusCode());
  }

  @Test
  void aHealthUrlThatIsNotAnHttpUrlIs422NamingTheField() throws Exception {
    start();
    HttpResponse<String> r =
        post(
            "/workers",
            "{\"worker_id\": 1, \"endpoint\": \"http://w1\", \"block_size\": 4,"
                + " \"health_url\": \"tcp://127.0.0.1:1\"}");
    assertEquals(422, r.statusCode(), r.body());
    JsonNode body = JSON.readTree(r.body());
    assertTrue(
        body.get("error").asText().startsWith("health_url must be an absolute http(s) URL"),
        r.body());
    assertEquals(null, node.service().worker(1));
  }
}
