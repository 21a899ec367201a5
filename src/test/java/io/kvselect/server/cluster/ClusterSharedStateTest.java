package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.server.KvselectNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Three clustered nodes (one JVM, loopback, random cluster name) sharing session bindings and
 * pending selections through Hazelcast. The failover test stops a node, so it runs last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterSharedStateTest {

  private static final int WORKERS = 4;
  private static ClusterHarness h;
  private static List<KvselectNode> nodes;
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void cluster() throws Exception {
    h = new ClusterHarness();
    // the subject here is the shared table's own atomicity (racing first bindings agree): a call
    // budget far above any healthy round trip keeps a slow, loaded machine from taking the
    // documented fallback (a local decision), which BudgetedSessionAffinityTest and
    // ClusterProcessesIT cover
    String[] budget = {"--cluster-call-budget-ms", "30000"};
    nodes = List.of(h.start(budget), h.start(budget), h.start(budget));
    for (KvselectNode n : nodes) {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  n.cluster().state().equals("joined")
                      && h.get(n, "/cluster").body().path("members").size() == 3);
    }
    h.registerWorkers(WORKERS);
  }

  @AfterAll
  static void close() throws Exception {
    if (h != null) {
      h.close();
    }
  }

  @Test
  @Order(1)
  void fiftySessionsRacingOnThreeNodesEachGetOneWorker() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    List<String> sessionOf = new ArrayList<>();
    for (int s = 0; s < 50; s++) {
      String session = "race-" + s;
      for (KvselectNode n : nodes) {
        calls.add(
            CLIENT.sendAsync(
                request(
                    n,
                    "/select_and_reserve",
                    Map.of("session_id", session, "token_ids", tokens(s, 40))),
                HttpResponse.BodyHandlers.ofString()));
        sessionOf.add(session);
      }
    }
    Map<String, Set<Long>> workers = new HashMap<>();
    for (int i = 0; i < calls.size(); i++) {
      HttpResponse<String> r = calls.get(i).get(60, TimeUnit.SECONDS);
      assertEquals(200, r.statusCode(), r.body());
      workers
          .computeIfAbsent(sessionOf.get(i), k -> new HashSet<>())
          .add(ClusterHarness.JSON.readTree(r.body()).path("worker_id").asLong());
    }
    assertEquals(50, workers.size());
    workers.forEach((session, w) -> assertEquals(1, w.size(), session + " was booked on " + w));
    // and every node now routes each session to that worker
    for (var e : workers.entrySet()) {
      long w = e.getValue().iterator().next();
      for (KvselectNode n : nodes) {
        JsonNode r =
            h.post(n, "/select", Map.of("session_id", e.getKey(), "token_ids", tokens(99, 40)))
                .body();
        assertEquals(w, r.path("worker_id").asLong(), e.getKey() + " on " + n.port() + ": " + r);
      }
    }
  }

  @Test
  @Order(2)
  void aSelectionCachedOnOneNodeIsBookedOnceThroughAnother() throws Exception {
    KvselectNode a = nodes.get(0);
    KvselectNode b = nodes.get(1);
    KvselectNode c = nodes.get(2);
    ClusterHarness.Reply selected =
        h.post(a, "/select", Map.of("selection_id", "cross-1", "token_ids", tokens(7, 64)));
    assertEquals(200, selected.status(), String.valueOf(selected.body()));
    long worker = selected.body().path("worker_id").asLong();
    long before = activeRequests(b);

    ClusterHarness.Reply booked = h.post(b, "/reservations", Map.of("selection_id", "cross-1"));
    assertEquals(201, booked.status(), String.valueOf(booked.body()));
    assertEquals(worker, booked.body().path("worker_id").asLong());
    assertEquals(before + 1, activeRequests(b), "the booking is in node B's load");

    ClusterHarness.Reply again = h.post(c, "/reservations", Map.of("selection_id", "cross-1"));
    assertEquals(404, again.status(), String.valueOf(again.body()));
    assertTrue(
        again.body().path("error").asText().contains("no pending selection"),
        again.body().toString());
    ClusterHarness.Reply onB = h.post(b, "/reservations", Map.of("selection_id", "cross-1"));
    assertEquals(404, onB.status(), String.valueOf(onB.body()));
    assertEquals(200, h.call(b, "DELETE", "/reservations/cross-1", null).status());
  }

  @Test
  @Order(3)
  void concurrentReplaysOnThreeNodesBookExactlyOnce() throws Exception {
    for (int round = 0; round < 10; round++) {
      String id = "burst-" + round;
      assertEquals(
          200,
          h.post(
                  nodes.get(round % 3),
                  "/select",
                  Map.of("selection_id", id, "token_ids", tokens(round, 32)))
              .status());
      List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
      for (KvselectNode n : nodes) {
        calls.add(
            CLIENT.sendAsync(
                request(n, "/reservations", Map.of("selection_id", id)),
                HttpResponse.BodyHandlers.ofString()));
      }
      int booked = 0;
      KvselectNode owner = null;
      for (int i = 0; i < calls.size(); i++) {
        HttpResponse<String> r = calls.get(i).get(60, TimeUnit.SECONDS);
        if (r.statusCode() == 201) {
          booked++;
          owner = nodes.get(i);
        } else {
          assertTrue(
              r.statusCode() == 404 || r.statusCode() == 409, r.statusCode() + " " + r.body());
        }
      }
      assertEquals(1, booked, id + " booked " + booked + " times");
      assertEquals(200, h.call(owner, "DELETE", "/reservations/" + id, null).status());
    }
  }

  @Test
  @Order(4)
  void bindingsSurviveANodeThatStopsAndTheSurvivorsKeepRouting() throws Exception {
    Map<String, Long> bound = new HashMap<>();
    for (int s = 0; s < 30; s++) {
      KvselectNode n = nodes.get(s % 3);
      JsonNode r =
          h.post(
                  n,
                  "/select_and_reserve",
                  Map.of("session_id", "fail-" + s, "token_ids", tokens(s, 24)))
              .body();
      bound.put("fail-" + s, r.path("worker_id").asLong());
    }
    KvselectNode dead = nodes.get(2);
    h.stop(dead);
    List<KvselectNode> survivors = nodes.subList(0, 2);
    for (KvselectNode n : survivors) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> h.get(n, "/cluster").body().path("members").size() == 2);
    }
    for (var e : bound.entrySet()) {
      for (KvselectNode n : survivors) {
        ClusterHarness.Reply r =
            h.post(
                n,
                "/select_and_reserve",
                Map.of("session_id", e.getKey(), "token_ids", tokens(5, 24)));
        assertEquals(200, r.status(), String.valueOf(r.body()));
        assertEquals(
            e.getValue(), r.body().path("worker_id").asLong(), e.getKey() + ": " + r.body());
      }
    }
  }

  private static long activeRequests(KvselectNode n) throws Exception {
    long total = 0;
    for (JsonNode partition : h.get(n, "/loads").body()) {
      for (JsonNode rank : partition.path("loads")) {
        total += rank.path("active_requests").asLong();
      }
    }
    return total;
  }

  private static HttpRequest request(KvselectNode n, String path, Object body) throws Exception {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.port() + path))
        .timeout(Duration.ofSeconds(30))
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(ClusterHarness.JSON.writeValueAsString(body)))
        .build();
  }

  /** A prompt of {@code n} tokens that differs per {@code seed}. */
  static List<Integer> tokens(int seed, int n) {
    List<Integer> t = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      t.add(seed * 1000 + i + 1);
    }
    return t;
  }
}
