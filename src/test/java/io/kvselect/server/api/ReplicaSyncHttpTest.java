package io.kvselect.server.api;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.sync.replica.ReplicaSync;
import io.kvselect.server.sync.replica.ReplicaWire;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Two kvselect nodes on loopback speaking Dynamo's replica-sync wire to each other: a booking's
 * add, prefill completion and free on one node show in the other's {@code /loads}, a session bound
 * on one is honoured by the other, and the peer routes answer as Dynamo's do. Every answer is
 * checked against openapi.json by {@link NodeHarness}.
 */
class ReplicaSyncHttpTest {

  private static final Duration WAIT = Duration.ofSeconds(20);

  private static String endpoint(NodeHarness n) {
    return "tcp://127.0.0.1:" + n.node.replicaSync().port();
  }

  /**
   * Books and frees probe reservations on {@code from} until {@code to} has received one, so the
   * SUB of {@code to} is past ZMQ's slow-joiner window before the test's own steps.
   */
  private static void awaitLink(NodeHarness from, NodeHarness to) {
    ReplicaSync rs = to.node.replicaSync();
    AtomicInteger i = new AtomicInteger();
    try {
      awaitLink(from, to, rs, i);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      // the state in the failure itself, so a CI log that keeps only the report shows it
      throw new AssertionError(
          "replica link not up after "
              + i.get()
              + " probes: "
              + LinkDiagnostics.describe("from", from.node.replicaSync())
              + "; "
              + LinkDiagnostics.describe("to", rs),
          e);
    }
  }

  private static void awaitLink(NodeHarness from, NodeHarness to, ReplicaSync rs, AtomicInteger i) {
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(50))
        .conditionEvaluationListener(
            LinkDiagnostics.onTimeout(
                () ->
                    LinkDiagnostics.describe("from", from.node.replicaSync())
                        + "; "
                        + LinkDiagnostics.describe("to", rs)))
        .until(
            () -> {
              String id = "probe-" + i.incrementAndGet();
              from.post(
                  "/select_and_reserve",
                  "{\"selection_id\":\"" + id + "\",\"token_ids\":[7,7,7,7]}");
              from.delete("/reservations/" + id);
              return rs.count("in", ReplicaWire.SEQUENCE_TOPIC, "applied") > 0;
            });
  }

  @Test
  void bookingLifecyclePropagatesBothWays() throws Exception {
    try (NodeHarness a = NodeHarness.approximate("--replica-sync-port", "0");
        NodeHarness b =
            NodeHarness.approximate(
                "--replica-sync-port", "0", "--replica-sync-peers", endpoint(a))) {
      a.worker(1);
      b.worker(1);
      assertEquals(
          201,
          b.post("/replica_sync/register_peer", "{\"endpoint\":\"" + endpoint(b) + "\"}").status(),
          "a node may list itself: its own events are dropped by router_id");
      assertEquals(
          201,
          a.post("/replica_sync/register_peer", "{\"endpoint\":\"" + endpoint(b) + "\"}").status());
      awaitLink(a, b);
      awaitLink(b, a);

      NodeHarness.Reply r =
          a.post(
              "/select_and_reserve",
              "{\"selection_id\":\"r-1\",\"token_ids\":[1,2,3,4,5,6,7,8],\"expected_output_tokens\":16}");
      assertEquals(200, r.status(), r.raw());
      await().atMost(WAIT).until(() -> b.load(1, 0).get("active_requests").asLong() == 1);
      assertEquals(
          8, b.load(1, 0).get("potential_prefill_tokens").asLong(), b.load(1, 0).toString());
      assertEquals(
          a.load(1, 0).get("potential_decode_blocks"), b.load(1, 0).get("potential_decode_blocks"));

      assertEquals(200, a.post("/reservations/r-1/prefill_complete", "{}").status());
      await().atMost(WAIT).until(() -> b.load(1, 0).get("potential_prefill_tokens").asLong() == 0);
      assertEquals(1, b.load(1, 0).get("active_requests").asLong());

      assertEquals(200, a.delete("/reservations/r-1").status());
      await().atMost(WAIT).until(() -> b.load(1, 0).get("active_requests").asLong() == 0);

      NodeHarness.Reply back =
          b.post("/select_and_reserve", "{\"selection_id\":\"r-2\",\"token_ids\":[1,2,3,4]}");
      assertEquals(200, back.status(), back.raw());
      await().atMost(WAIT).until(() -> a.load(1, 0).get("active_requests").asLong() == 1);
      assertEquals(200, b.delete("/reservations/r-2").status());
      await().atMost(WAIT).until(() -> a.load(1, 0).get("active_requests").asLong() == 0);
      assertTrue(
          b.node.replicaSync().count("in", ReplicaWire.SEQUENCE_TOPIC, "own") > 0,
          "B subscribed to itself and saw its own events");
      assertEquals(0, a.node.replicaSync().count("in", ReplicaWire.SEQUENCE_TOPIC, "malformed"));
      String metrics = a.get("/metrics").raw();
      assertTrue(
          metrics.contains(
              "kvselect_replica_sync_events_total{direction=\"in\",outcome=\"applied\","
                  + "topic=\"dynamo.slot-tracker.v1\"}"),
          metrics);
    }
  }

  @Test
  void sessionBoundOnOneNodeIsHonouredOnTheOther() throws Exception {
    try (NodeHarness a =
            NodeHarness.approximate(
                "--session-affinity-ttl-secs", "600", "--replica-sync-port", "0");
        NodeHarness b =
            NodeHarness.approximate(
                "--session-affinity-ttl-secs",
                "600",
                "--replica-sync-port",
                "0",
                "--replica-sync-peers",
                endpoint(a))) {
      for (NodeHarness n : new NodeHarness[] {a, b}) {
        n.worker(1);
        n.worker(2);
      }
      awaitLink(a, b);
      NodeHarness.Reply r =
          a.post(
              "/select_and_reserve",
              "{\"selection_id\":\"s-1\",\"session_id\":\"conv-1\",\"token_ids\":[1,2,3,4,5,6,7,8]}");
      assertEquals(200, r.status(), r.raw());
      long bound = r.body().get("worker_id").asLong();
      ReplicaSync rb = b.node.replicaSync();
      await()
          .atMost(WAIT)
          .until(
              () ->
                  rb.count("in", ReplicaWire.AFFINITY_TOPIC, "applied") == 1
                      && b.load(bound, 0).get("active_requests").asLong() == 1);
      // the booking of s-1 loads the bound worker on B too, so an unpinned pick would take the
      // other
      for (int i = 0; i < 5; i++) {
        NodeHarness.Reply s =
            b.post("/select", "{\"session_id\":\"conv-1\",\"token_ids\":[9,9,9,9]}");
        assertEquals(bound, s.body().get("worker_id").asLong(), s.raw());
      }
      assertEquals(
          3 - bound,
          b.post("/select", "{\"session_id\":\"other\",\"token_ids\":[9,9,9,9]}")
              .body()
              .get("worker_id")
              .asLong(),
          "an unbound session goes to the less loaded worker");
    }
  }

  @Test
  void peerRoutesAnswerAsDynamo() throws Exception {
    try (NodeHarness n =
        NodeHarness.approximate(
            "--replica-sync-port",
            "0",
            "--replica-sync-peers",
            "tcp://127.0.0.1:9,tcp://127.0.0.1:7")) {
      assertEquals(
          "[\"tcp://127.0.0.1:7\",\"tcp://127.0.0.1:9\"]",
          n.get("/replica_sync/peers").raw().strip());
      assertEquals(
          200,
          n.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:9\"}").status());
      assertEquals(
          201,
          n.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:8\"}").status());
      assertEquals(
          "[\"tcp://127.0.0.1:7\",\"tcp://127.0.0.1:8\",\"tcp://127.0.0.1:9\"]",
          n.get("/replica_sync/peers").raw().strip());
      assertEquals(
          200,
          n.post("/replica_sync/deregister_peer", "{\"endpoint\":\"tcp://127.0.0.1:8\"}").status());
      NodeHarness.Reply gone =
          n.post("/replica_sync/deregister_peer", "{\"endpoint\":\"tcp://127.0.0.1:8\"}");
      assertEquals(404, gone.status());
      assertEquals("{\"error\":\"peer not found\"}", gone.raw());
      NodeHarness.Reply bad =
          n.post("/replica_sync/register_peer", "{\"endpoint\":\"127.0.0.1:8\"}");
      assertEquals(400, bad.status());
      assertNotNull(bad.error());
      assertTrue(bad.error().contains("endpoint"), bad.raw());
      NodeHarness.Reply missing = n.post("/replica_sync/register_peer", "{}");
      assertEquals(422, missing.status());
      assertTrue(missing.error().contains("endpoint"), missing.raw());
      assertEquals(
          "[\"tcp://127.0.0.1:7\",\"tcp://127.0.0.1:9\"]",
          n.get("/replica_sync/peers").raw().strip(),
          "failed requests changed nothing");
    }
  }

  @Test
  void aTakenReplicaPortFailsTheStartNamingIt() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      io.kvselect.server.config.NodeSettings s =
          io.kvselect.server.config.NodeSettings.parse(
              new String[] {
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--replica-sync-port",
                Integer.toString(taken.getLocalPort())
              },
              java.util.Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
      java.util.concurrent.ExecutionException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              java.util.concurrent.ExecutionException.class,
              () ->
                  io.kvselect.server.KvselectNode.start(s, 1)
                      .toCompletionStage()
                      .toCompletableFuture()
                      .get(30, java.util.concurrent.TimeUnit.SECONDS));
      assertTrue(
          e.getCause()
              .getMessage()
              .contains("replica sync PUB tcp://127.0.0.1:" + taken.getLocalPort()),
          e.getCause().getMessage());
    }
  }

  @Test
  void stoppedPeerManagerIs503() throws Exception {
    try (NodeHarness n = NodeHarness.approximate("--replica-sync-port", "0")) {
      n.node.replicaSync().stop().get(10, java.util.concurrent.TimeUnit.SECONDS);
      NodeHarness.Reply r =
          n.post("/replica_sync/register_peer", "{\"endpoint\":\"tcp://127.0.0.1:8\"}");
      assertEquals(503, r.status(), r.raw());
      assertEquals("[]", n.get("/replica_sync/peers").raw().strip());
    }
  }
}
