package io.kvselect.server;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.testing.FatJar;
import io.kvselect.testing.Ports;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM to a real {@code bin/kvselect} process (the fat jar {@code package} built): while a
 * registration is still uploading and a selection waits in the router queue, the node answers
 * {@code /ready} and new selections 503, the parked selection 503, the upload 201, and then exits
 * (143, the JVM's code for SIGTERM) having logged the drain. Integration-test phase.
 */
class DrainProcessIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @Test
  void sigtermDrainsInFlightRequestsThenExits() throws Exception {
    int port = Ports.free();
    Path logs = Files.createDirectories(Path.of("target", "drain-it"));
    Path out = logs.resolve("node.out");
    ProcessBuilder pb =
        new ProcessBuilder(
                "./bin/kvselect",
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--drain-timeout-secs",
                "60")
            .redirectOutput(out.toFile())
            .redirectError(logs.resolve("node.err").toFile());
    pb.environment().put("KVSELECT_JAR", FatJar.path().toString());
    pb.environment().put("DYN_ROUTER_USE_KV_EVENTS", "false");
    pb.environment().put("DYN_ROUTER_QUEUE_THRESHOLD", "1.0");
    Process p = pb.start();
    try {
      await()
          .atMost(60, TimeUnit.SECONDS)
          .ignoreExceptions()
          .until(() -> get(port, "/health").statusCode() == 200);
      assertEquals(
          201,
          post(
                  port,
                  "/workers",
                  "{\"worker_id\": 1, \"endpoint\": \"http://w1\", \"block_size\": 4,"
                      + " \"max_num_batched_tokens\": 16}")
              .get(20, TimeUnit.SECONDS)
              .statusCode());
      assertEquals(
          200,
          post(port, "/select_and_reserve", DrainTest.prompt("first", 0))
              .get(20, TimeUnit.SECONDS)
              .statusCode());
      CompletableFuture<HttpResponse<String>> parked =
          post(port, "/select_and_reserve", DrainTest.prompt("parked", 100));
      try (DrainTest.SlowUpload upload = new DrainTest.SlowUpload(port, DrainTest.LATE_WORKER)) {
        // both POSTs are in flight: the parked selection and the registration still uploading
        await().atMost(20, TimeUnit.SECONDS).until(() -> activePosts(port) >= 2);

        Process kill =
            new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor());

        HttpResponse<String> answer = parked.get(30, TimeUnit.SECONDS);
        assertEquals(503, answer.statusCode(), answer.body());
        assertEquals(
            "node is draining; retry on another node",
            JSON.readTree(answer.body()).get("error").asText());
        assertEquals(503, get(port, "/ready").statusCode());
        HttpResponse<String> select =
            post(port, "/select", DrainTest.prompt("new", 200)).get(20, TimeUnit.SECONDS);
        assertEquals(503, select.statusCode(), select.body());
        assertTrue(JSON.readTree(select.body()).has("error"), select.body());
        assertTrue(p.isAlive(), "the process exited while a request was in flight");

        assertEquals("HTTP/1.1 201 Created", upload.finish());
      }
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the node did not exit after the drain");
      assertEquals(143, p.exitValue());
      String log = Files.readString(out);
      assertTrue(
          log.contains(
              "draining: /ready and new selections answer 503, 1 queued request(s) answered 503"),
          log);
      assertTrue(log.contains("drained and closed"), log);
      assertFalse(log.contains("drain timeout"), log);
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  private static long activePosts(int port) throws Exception {
    return (long)
        get(port, "/metrics")
            .body()
            .lines()
            .filter(
                l ->
                    l.startsWith("vertx_http_server_active_requests{")
                        && l.contains("method=\"POST\""))
            .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
            .sum();
  }

  private static HttpResponse<String> get(int port, String path) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(20))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static CompletableFuture<HttpResponse<String>> post(int port, String path, String body) {
    return CLIENT.sendAsync(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(60))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
