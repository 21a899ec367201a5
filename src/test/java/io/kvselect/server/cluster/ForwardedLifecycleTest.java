package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.bus.BusAddresses;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Lifecycle calls reach the node that booked whichever node they are sent to (three clustered
 * nodes in this JVM, started through the real clustered path): a booking made on A is
 * prefill-completed through B, grown through C and freed through B, over HTTP and over the
 * event-bus API; every node's load converges to zero; a second free, and the free of an id no
 * node holds, answer 404; a step whose origin does not answer (an inbound interceptor drops it)
 * answers 503 and frees nothing; a step for a booking whose node has left answers 404.
 */
class ForwardedLifecycleTest {

  private static final Duration CONVERGED = Duration.ofSeconds(30);

  /** Active requests on worker 1 as {@code /loads} of {@code n} shows them (-1 when not listed). */
  private static int active(ClusterHarness h, KvselectNode n) throws Exception {
    for (JsonNode p : h.get(n, "/loads").body()) {
      for (JsonNode l : p.get("loads")) {
        if (l.get("worker_id").asLong() == 1) {
          return l.get("active_requests").asInt();
        }
      }
    }
    return -1;
  }

  private static void registerOnOneNode(ClusterHarness h, KvselectNode on, List<KvselectNode> all)
      throws Exception {
    ClusterHarness.Reply r =
        h.post(
            on,
            "/workers",
            Map.of("worker_id", 1, "endpoint", "http://worker-1:8000", "block_size", 16));
    assertEquals(201, r.status(), String.valueOf(r.body()));
    for (KvselectNode n : all) {
      await().atMost(CONVERGED).until(() -> active(h, n) == 0);
    }
  }

  private static ClusterHarness.Reply book(ClusterHarness h, KvselectNode n, String id)
      throws Exception {
    ClusterHarness.Reply r =
        h.post(
            n,
            "/select_and_reserve",
            Map.of(
                "token_ids",
                List.of(1, 2, 3, 4, 5),
                "selection_id",
                id,
                "expected_output_tokens",
                64));
    assertEquals(200, r.status(), String.valueOf(r.body()));
    return r;
  }

  @Test
  void stepsSentToAnyNodeReachTheNodeThatBooked() throws Exception {
    try (ClusterHarness h = new ClusterHarness()) {
      KvselectNode a = h.start("--cluster-reconcile-secs", "1");
      KvselectNode b = h.start("--cluster-reconcile-secs", "1");
      KvselectNode c = h.start("--cluster-reconcile-secs", "1");
      List<KvselectNode> all = List.of(a, b, c);
      registerOnOneNode(h, a, all);

      // at once, before B and C may have heard of the booking (origin unknown: the peers are asked)
      book(h, a, "fw-1");
      ClusterHarness.Reply pc = h.post(b, "/reservations/fw-1/prefill_complete", null);
      assertEquals(200, pc.status(), String.valueOf(pc.body()));
      assertEquals("ok", pc.body().get("status").asText());
      for (KvselectNode n : all) {
        await().atMost(CONVERGED).until(() -> active(h, n) == 1);
      }
      // now B and C know the origin from their load view
      ClusterHarness.Reply ob =
          h.post(c, "/reservations/fw-1/output_block", Map.of("decay_fraction", 0.5));
      assertEquals(200, ob.status(), String.valueOf(ob.body()));
      ClusterHarness.Reply bad =
          h.post(c, "/reservations/fw-1/output_block", Map.of("decay_fraction", 2.0));
      assertEquals(400, bad.status(), "checked where it is received: " + bad.body());
      assertEquals(1, a.service().bookingCount(), "the booking stays on A");
      assertEquals(0, b.service().bookingCount());
      assertEquals(0, c.service().bookingCount());

      ClusterHarness.Reply freed = h.call(b, "DELETE", "/reservations/fw-1", null);
      assertEquals(200, freed.status(), String.valueOf(freed.body()));
      assertEquals(
          0, a.service().bookingCount(), "A's booking is gone when the forwarded free answers");
      for (KvselectNode n : all) {
        await().atMost(CONVERGED).until(() -> active(h, n) == 0);
      }
      for (KvselectNode n : all) {
        ClusterHarness.Reply again = h.call(n, "DELETE", "/reservations/fw-1", null);
        assertEquals(404, again.status(), String.valueOf(again.body()));
        assertTrue(
            again.body().get("error").asText().contains("fw-1"), String.valueOf(again.body()));
      }
      ClusterHarness.Reply unknown = h.call(c, "DELETE", "/reservations/never-booked", null);
      assertEquals(404, unknown.status(), String.valueOf(unknown.body()));
      assertEquals(404, h.post(b, "/reservations/never-booked/prefill_complete", null).status());
      assertEquals(404, h.post(b, "/reservations/never-booked/output_block", Map.of()).status());

      // the event-bus API shares the operations: book on A over HTTP, finish through B's bus
      book(h, a, "fw-bus");
      JsonObject id = new JsonObject().put("selection_id", "fw-bus");
      DeliveryOptions o = new DeliveryOptions().setSendTimeout(20_000);
      assertEquals(
          "ok",
          ((JsonObject)
                  b.vertx()
                      .eventBus()
                      .request(BusAddresses.PREFILL_COMPLETE, id, o)
                      .toCompletionStage()
                      .toCompletableFuture()
                      .get(30, TimeUnit.SECONDS)
                      .body())
              .getString("status"));
      assertEquals(
          "ok",
          ((JsonObject)
                  c.vertx()
                      .eventBus()
                      .request(BusAddresses.OUTPUT_BLOCK, id, o)
                      .toCompletionStage()
                      .toCompletableFuture()
                      .get(30, TimeUnit.SECONDS)
                      .body())
              .getString("status"));
      assertEquals(
          "ok",
          ((JsonObject)
                  b.vertx()
                      .eventBus()
                      .request(BusAddresses.FREE, id, o)
                      .toCompletionStage()
                      .toCompletableFuture()
                      .get(30, TimeUnit.SECONDS)
                      .body())
              .getString("status"));
      assertEquals(0, a.service().bookingCount());
      ExecutionException again =
          org.junit.jupiter.api.Assertions.assertThrows(
              ExecutionException.class,
              () ->
                  c.vertx()
                      .eventBus()
                      .request(BusAddresses.FREE, id, o)
                      .toCompletionStage()
                      .toCompletableFuture()
                      .get(30, TimeUnit.SECONDS));
      assertEquals(404, ((ReplyException) again.getCause()).failureCode());
      for (KvselectNode n : all) {
        await().atMost(CONVERGED).until(() -> active(h, n) == 0);
      }

      // the origin is listed but does not answer (a death not noticed yet): 503, the booking stays
      book(h, a, "fw-silent");
      for (KvselectNode n : List.of(b, c)) {
        await().atMost(CONVERGED).until(() -> active(h, n) == 1);
      }
      String toA = SyncAddresses.lifecycle(a.peerSync().nodeId());
      java.util.concurrent.atomic.AtomicBoolean silent =
          new java.util.concurrent.atomic.AtomicBoolean(true);
      a.vertx()
          .eventBus()
          .addInboundInterceptor(
              dc -> {
                if (!(silent.get() && dc.message().address().equals(toA))) {
                  dc.next();
                }
              });
      ClusterHarness.Reply unanswered = h.call(b, "DELETE", "/reservations/fw-silent", null);
      assertEquals(503, unanswered.status(), String.valueOf(unanswered.body()));
      assertTrue(
          unanswered.body().get("error").asText().contains("retry"),
          String.valueOf(unanswered.body()));
      assertEquals(1, a.service().bookingCount(), "nothing was freed");
      silent.set(false);
      // right after a timeout the origin is not waited for again for 2 s: a retry within them
      // answers 503 at once and frees nothing (unless this thread was descheduled past the 2 s);
      // a retry after that reaches it
      ClusterHarness.Reply fast = h.call(b, "DELETE", "/reservations/fw-silent", null);
      if (fast.status() == 503) {
        assertTrue(
            fast.body().get("error").asText().contains("just now"), String.valueOf(fast.body()));
        assertEquals(1, a.service().bookingCount(), "nothing was freed");
      } else {
        assertEquals(200, fast.status(), String.valueOf(fast.body()));
      }
      if (fast.status() != 200) {
        // the unanswered DELETE's free was kept for A and is delivered once A answers again, so a
        // retry that arrives after it finds nothing to free (404): either way it is freed once
        java.util.List<Integer> retries = new java.util.concurrent.CopyOnWriteArrayList<>();
        await()
            .atMost(Duration.ofSeconds(15))
            .pollInterval(Duration.ofMillis(500))
            .failFast(() -> retries.contains(500))
            .until(
                () -> {
                  int st = h.call(b, "DELETE", "/reservations/fw-silent", null).status();
                  retries.add(st);
                  return st == 200 || (st == 404 && a.service().bookingCount() == 0);
                });
      }
      for (KvselectNode n : all) {
        await().atMost(CONVERGED).until(() -> active(h, n) == 0);
      }

      // the origin leaves: its reservations die with it, a step sent elsewhere answers 404
      book(h, a, "fw-dead");
      for (KvselectNode n : List.of(b, c)) {
        await().atMost(CONVERGED).until(() -> active(h, n) == 1);
      }
      h.stop(a);
      ClusterHarness.Reply dead = h.call(b, "DELETE", "/reservations/fw-dead", null);
      assertEquals(404, dead.status(), String.valueOf(dead.body()));
      for (KvselectNode n : List.of(b, c)) {
        await().atMost(CONVERGED).until(() -> active(h, n) == 0);
      }
    }
  }
}
