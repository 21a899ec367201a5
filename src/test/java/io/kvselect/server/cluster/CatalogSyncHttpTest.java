package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.server.KvselectNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Three nodes started through the real clustered path (flags, {@code KvselectNode.start}) agree
 * on the worker catalog and on the load, over HTTP: a worker POSTed on one node is listed and
 * chosen on the others, a booking made on one shows in every node's {@code /loads} and leaves
 * them when freed, a PATCH and a DELETE on any node apply everywhere.
 */
class CatalogSyncHttpTest {

  private static final Duration CONVERGED = Duration.ofSeconds(20);

  private static int activeRequests(ClusterHarness h, KvselectNode n, long worker)
      throws Exception {
    for (JsonNode p : h.get(n, "/loads").body()) {
      for (JsonNode l : p.get("loads")) {
        if (l.get("worker_id").asLong() == worker) {
          return l.get("active_requests").asInt();
        }
      }
    }
    return -1;
  }

  /** Worker {@code id} as {@code GET /workers} of {@code n} lists it, or null. */
  private static JsonNode listed(ClusterHarness h, KvselectNode n, long id) throws Exception {
    for (JsonNode w : h.get(n, "/workers").body()) {
      if (w.get("worker_id").asLong() == id) {
        return w;
      }
    }
    return null;
  }

  @Test
  void workersAndLoadsPropagateBetweenNodesOverHttp() throws Exception {
    try (ClusterHarness h = new ClusterHarness()) {
      KvselectNode a = h.start("--cluster-reconcile-secs", "1");
      KvselectNode b = h.start("--cluster-reconcile-secs", "1");
      KvselectNode c = h.start("--cluster-reconcile-secs", "1");
      assertNotNull(a.peerSync());
      assertEquals("done", c.peerSync().recovery().state(), "the third node copied from a peer");
      JsonNode sync = h.get(c, "/cluster").body().get("sync");
      assertEquals("done", sync.path("recovery").path("state").asText(), String.valueOf(sync));
      assertEquals(1.0, sync.path("reconcile_interval_secs").asDouble());
      assertEquals(0, sync.path("unknown_version").asLong());
      assertTrue(sync.path("catalog_repair").has("workers_repaired"), String.valueOf(sync));
      // a member joined a's cluster twice: a put its own bus registrations back 2 s after each
      await()
          .atMost(CONVERGED)
          .until(
              () ->
                  h.get(a, "/cluster")
                          .body()
                          .path("subscription_repair")
                          .path("republished")
                          .asLong()
                      >= 1);

      assertEquals(
          201,
          h.post(
                  a,
                  "/workers",
                  Map.of("worker_id", 9, "endpoint", "http://w9:8000", "block_size", 16))
              .status());
      for (KvselectNode n : List.of(b, c)) {
        await().atMost(CONVERGED).until(() -> listed(h, n, 9) != null);
        ClusterHarness.Reply s = h.post(n, "/select", Map.of("token_ids", List.of(1, 2, 3)));
        assertEquals(200, s.status(), String.valueOf(s.body()));
        assertEquals(9, s.body().get("worker_id").asLong());
      }

      ClusterHarness.Reply booked =
          h.post(
              a,
              "/select_and_reserve",
              Map.of("token_ids", List.of(1, 2, 3), "selection_id", "http-1"));
      assertEquals(200, booked.status() / 100 * 100, String.valueOf(booked.body()));
      for (KvselectNode n : List.of(b, c)) {
        await().atMost(CONVERGED).until(() -> activeRequests(h, n, 9) == 1);
      }
      assertEquals(200, h.call(a, "DELETE", "/reservations/http-1", null).status());
      for (KvselectNode n : List.of(b, c)) {
        await().atMost(CONVERGED).until(() -> activeRequests(h, n, 9) == 0);
        JsonNode counters = h.get(n, "/cluster").body().get("sync");
        assertTrue(counters.path("applied").asLong() >= 2, String.valueOf(counters));
      }

      assertEquals(
          200, h.call(c, "PATCH", "/workers/9", Map.of("max_num_batched_tokens", 4096)).status());
      for (KvselectNode n : List.of(a, b)) {
        await()
            .atMost(CONVERGED)
            .until(
                () -> {
                  JsonNode w = listed(h, n, 9);
                  return w != null && w.path("max_num_batched_tokens").asLong() == 4096;
                });
      }

      assertEquals(200, h.call(b, "DELETE", "/workers/9", null).status());
      for (KvselectNode n : List.of(a, c)) {
        await().atMost(CONVERGED).until(() -> listed(h, n, 9) == null);
      }
    }
  }
}
