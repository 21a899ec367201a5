package io.kvselect.server.api;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The router queue over HTTP: with {@code router_queue_threshold} set, a request whose eligible
 * ranks are all busy waits (its HTTP request open), is answered when a prefill completes, in
 * policy order, and fails with 429 and Dynamo's {@code details} when it waits too long; a client
 * that goes away leaves the queue; {@code /loads} counts the waiting requests.
 */
class RouterQueueHttpTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  /** One worker, 16 batched tokens: any 32-token prompt makes it busy at threshold 1.0. */
  private static NodeHarness node(String... flags) throws Exception {
    return node(Map.of(), flags);
  }

  private static NodeHarness node(Map<String, String> extraEnv, String... flags) throws Exception {
    Map<String, String> env = new java.util.HashMap<>(extraEnv);
    env.put("DYN_ROUTER_USE_KV_EVENTS", "false");
    env.put("DYN_ROUTER_QUEUE_THRESHOLD", "1.0");
    NodeHarness n = new NodeHarness(env, flags);
    NodeHarness.Reply w =
        n.post(
            "/workers",
            "{\"worker_id\":1,\"endpoint\":\"http://w1\",\"block_size\":4,"
                + "\"max_num_batched_tokens\":16}");
    assertEquals(201, w.status(), w.raw());
    return n;
  }

  private static String prompt(String id, int base) {
    StringBuilder t = new StringBuilder();
    for (int i = 0; i < 32; i++) {
      t.append(i == 0 ? "" : ",").append(base + i);
    }
    return "{\"selection_id\":\"" + id + "\",\"token_ids\":[" + t + "]}";
  }

  private static CompletableFuture<HttpResponse<String>> send(
      NodeHarness n, String path, String body, String cls) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.node.port() + path))
            .timeout(Duration.ofSeconds(60))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (cls != null) {
      b.header("x-dynamo-meta-policy-class", cls);
    }
    return CLIENT.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static long pending(NodeHarness n) throws Exception {
    return n.get("/loads").body().get(0).get("pending_count").asLong();
  }

  @Test
  void busyWorkersParkRequestsThatAreServedInOrderAsPrefillsComplete() throws Exception {
    try (NodeHarness n = node()) {
      assertEquals(200, n.post("/select_and_reserve", prompt("first", 0)).status());
      List<CompletableFuture<HttpResponse<String>>> waiting = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        waiting.add(send(n, "/select_and_reserve", prompt("q" + i, 100 * (i + 1)), null));
        int expected = i + 1;
        await().atMost(20, TimeUnit.SECONDS).until(() -> pending(n) == expected);
      }
      JsonNode loads = n.get("/loads").body().get(0);
      assertEquals(96, loads.get("pending_isl_tokens").asLong(), loads.toString());
      assertFalse(waiting.get(0).isDone(), "the HTTP request stays open while it waits");
      NodeHarness.Reply advisory = n.post("/select", "{\"advisory\":true,\"token_ids\":[1,2,3,4]}");
      assertEquals(200, advisory.status(), "an advisory select never waits: " + advisory.raw());

      String previous = "first";
      for (int i = 0; i < 3; i++) {
        assertEquals(200, n.post("/reservations/" + previous + "/prefill_complete", "").status());
        HttpResponse<String> r = waiting.get(i).get(20, TimeUnit.SECONDS);
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("q" + i, JSON.readTree(r.body()).get("selection_id").asText(), "FCFS order");
        for (int later = i + 1; later < 3; later++) {
          assertFalse(waiting.get(later).isDone(), "one completed prefill admits one request here");
        }
        previous = "q" + i;
      }
      assertEquals(0, pending(n));
    }
  }

  @Test
  void aRequestThatWaitsTooLongGets429WithDetails() throws Exception {
    try (NodeHarness n = node("--router-queue-timeout-secs", "1")) {
      assertEquals(200, n.post("/select_and_reserve", prompt("first", 0)).status());
      HttpResponse<String> r =
          send(n, "/select_and_reserve", prompt("late", 500), "interactive")
              .get(30, TimeUnit.SECONDS);
      assertEquals(429, r.statusCode(), r.body());
      JsonNode body = JSON.readTree(r.body());
      assertTrue(body.get("error").asText().contains("busy"), r.body());
      JsonNode details = body.get("details");
      assertEquals("timeout", details.get("limit_kind").asText(), r.body());
      assertTrue(
          details.has("policy_class") && details.has("current") && details.has("limit"), r.body());
      assertEquals(0, pending(n));
      assertEquals(
          1,
          n.get("/loads").body().get(0).get("loads").get(0).get("active_requests").asLong(),
          "the timed-out request booked nothing");
      NodeHarness.Reply free = n.call("DELETE", "/reservations/late", null, null);
      assertEquals(404, free.status(), free.raw());
    }
  }

  @Test
  void aClientThatGoesAwayLeavesTheQueue() throws Exception {
    try (NodeHarness n = node()) {
      assertEquals(200, n.post("/select_and_reserve", prompt("first", 0)).status());
      CompletableFuture<HttpResponse<String>> gone =
          send(n, "/select_and_reserve", prompt("gone", 300), null);
      await().atMost(20, TimeUnit.SECONDS).until(() -> pending(n) == 1);
      gone.cancel(true); // closes the client's connection
      await().atMost(20, TimeUnit.SECONDS).until(() -> pending(n) == 0);
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", n.node.port())) {
        String body = prompt("raw", 700);
        s.getOutputStream()
            .write(
                ("POST /select_and_reserve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: "
                        + body.length()
                        + "\r\n\r\n"
                        + body)
                    .getBytes());
        s.getOutputStream().flush();
        await().atMost(20, TimeUnit.SECONDS).until(() -> pending(n) == 1);
      }
      await().atMost(20, TimeUnit.SECONDS).until(() -> pending(n) == 0);
      assertEquals(200, n.post("/reservations/first/prefill_complete", "").status());
      assertEquals(
          1,
          n.get("/loads").body().get(0).get("loads").get(0).get("active_requests").asLong(),
          "neither departed request booked");
      assertEquals(404, n.call("DELETE", "/reservations/raw", null, null).status());
      assertEquals(404, n.call("DELETE", "/reservations/gone", null, null).status());
    }
  }

  @Test
  void aClassWithoutRoomRejectsWithDynamosDetailsWhileTheDefaultClassWaits() throws Exception {
    String yaml =
        "classes:\n  - name: batch\n    request_queue_limit_per_worker: 0\n"
            + "  - name: interactive\n    quantum: 2\n";
    try (NodeHarness n =
        node(Map.of("DYN_ROUTER_POLICY_CONFIG", yaml), "--router-queue-timeout-secs", "30")) {
      assertEquals(200, n.post("/select_and_reserve", prompt("first", 0)).status());
      HttpResponse<String> r =
          send(n, "/select_and_reserve", prompt("b1", 100), "batch").get(30, TimeUnit.SECONDS);
      assertEquals(429, r.statusCode(), r.body());
      JsonNode d = JSON.readTree(r.body()).get("details");
      assertEquals("batch", d.get("policy_class").asText(), r.body());
      assertEquals("requests", d.get("limit_kind").asText(), r.body());
      assertEquals(0, d.get("current").asLong(), r.body());
      assertEquals(0, d.get("limit").asLong(), r.body());
      CompletableFuture<HttpResponse<String>> waiting =
          send(n, "/select_and_reserve", prompt("i1", 200), " interactive ");
      await().atMost(20, TimeUnit.SECONDS).until(() -> pending(n) == 1);
      assertEquals(
          0,
          n.get("/loads").body().get(0).get("loads").get(0).get("active_requests").asLong() - 1,
          "the rejected request booked nothing");
      assertEquals(200, n.post("/reservations/first/prefill_complete", "").status());
      assertEquals(200, waiting.get(20, TimeUnit.SECONDS).statusCode());
      String metrics = n.get("/metrics").raw();
      assertTrue(
          metrics.contains(
              "kvselect_router_queue_wait_seconds_count{outcome=\"rejected\",partition=\"default:default\",policy_class=\"batch\"} 1\n"),
          metrics);
    }
  }

  @Test
  void anIslTierCapsThePendingTokens() throws Exception {
    String yaml =
        "router_queue_by_incoming_missing_isl:\n  - min_missing_isl_tokens: 0\n    max_queue_depth: 40\n";
    try (NodeHarness n = node(Map.of("DYN_ROUTER_POLICY_CONFIG", yaml))) {
      assertEquals(200, n.post("/select_and_reserve", prompt("first", 0)).status());
      CompletableFuture<HttpResponse<String>> first =
          send(n, "/select_and_reserve", prompt("w1", 100), null);
      await().atMost(20, TimeUnit.SECONDS).until(() -> pending(n) == 1);
      HttpResponse<String> r =
          send(n, "/select_and_reserve", prompt("w2", 200), null).get(30, TimeUnit.SECONDS);
      assertEquals(429, r.statusCode(), r.body());
      JsonNode d = JSON.readTree(r.body()).get("details");
      assertEquals("isl_tokens", d.get("limit_kind").asText(), r.body());
      assertEquals(32, d.get("current").asLong(), r.body());
      assertEquals(40, d.get("limit").asLong(), r.body());
      assertEquals(200, n.post("/reservations/first/prefill_complete", "").status());
      assertEquals(200, first.get(20, TimeUnit.SECONDS).statusCode());
    }
  }

  @Test
  void aThousandParkedRequestsBlockNoEventLoop() throws Exception {
    ch.qos.logback.classic.Logger checker =
        (ch.qos.logback.classic.Logger)
            org.slf4j.LoggerFactory.getLogger("io.vertx.core.impl.BlockedThreadChecker");
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> warnings =
        new ch.qos.logback.core.read.ListAppender<>();
    warnings.start();
    checker.addAppender(warnings);
    try (NodeHarness n = node("--router-queue-timeout-secs", "120")) {
      assertEquals(200, n.post("/select_and_reserve", prompt("first", 0)).status());
      HttpClient many = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      List<CompletableFuture<HttpResponse<String>>> parked = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        parked.add(
            many.sendAsync(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + n.node.port() + "/select_and_reserve"))
                    .timeout(Duration.ofSeconds(60))
                    .header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(prompt("p" + i, 1_000 + i)))
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
      }
      await().atMost(30, TimeUnit.SECONDS).until(() -> pending(n) == 1_000);
      assertEquals(200, n.get("/health").status(), "the node answers while 1,000 requests wait");
      // a worker that changes (a larger batch) wakes the queue
      NodeHarness.Reply patched =
          n.patch("/workers/1", Map.of("max_num_batched_tokens", 1_000_000));
      assertEquals(200, patched.status(), patched.raw());
      long served = 0;
      for (CompletableFuture<HttpResponse<String>> f : parked) {
        served += f.get(60, TimeUnit.SECONDS).statusCode() == 200 ? 1 : 0;
      }
      assertEquals(1_000, served);
      assertEquals(0, pending(n));
      assertEquals(
          1_001, n.get("/loads").body().get(0).get("loads").get(0).get("active_requests").asLong());
    } finally {
      checker.detachAppender(warnings);
    }
    assertEquals(
        List.of(),
        warnings.list.stream().map(Object::toString).toList(),
        "Vert.x blocked-thread checker");
  }
}
