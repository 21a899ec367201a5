package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.Ports;
import io.vertx.core.Context;
import io.vertx.core.eventbus.DeliveryContext;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A node joining a cluster answers {@code /ready} 503, with the reason, until it has recovered
 * catalog and index from a peer: the peer holds the joiner's snapshot request (an inbound
 * interceptor), the joiner has a schedulable worker of its own meanwhile (so only the recovery
 * keeps it unready), and {@code /ready} turns 200 once the request is let through.
 */
class ReadyDuringRecoveryTest {

  private record Held(DeliveryContext<Object> delivery, Context context) {}

  @Test
  void aJoiningNodeIsNotReadyUntilItsRecoveryFinished() throws Exception {
    try (ClusterHarness h = new ClusterHarness()) {
      KvselectNode a = h.start();
      assertEquals(
          201,
          h.post(
                  a,
                  "/workers",
                  Map.of("worker_id", 1, "endpoint", "http://worker-1:8000", "block_size", 16))
              .status());
      String toA = SyncAddresses.node(a.peerSync().nodeId());
      List<Held> held = new CopyOnWriteArrayList<>();
      a.vertx()
          .eventBus()
          .addInboundInterceptor(
              dc -> {
                if (dc.message().address().equals(toA)
                    && String.valueOf(dc.message().body()).contains("snapshot_open")) {
                  held.add(new Held(dc, io.vertx.core.Vertx.currentContext()));
                } else {
                  dc.next();
                }
              });

      int port = Ports.free();
      NodeSettings s =
          NodeSettings.parse(
              new String[] {
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--cluster",
                "--cluster-name",
                h.name,
                "--cluster-members",
                h.members(3),
                "--cluster-port",
                Integer.toString(h.basePort),
                "--session-affinity-ttl-secs",
                "600"
              },
              ClusterHarness.ENV);
      CompletableFuture<KvselectNode> joining =
          KvselectNode.start(s).toCompletionStage().toCompletableFuture();
      try {
        await().atMost(Duration.ofSeconds(60)).until(() -> !held.isEmpty());
        ClusterHarness.Reply r =
            call(
                port,
                h,
                "POST",
                "/workers",
                Map.of("worker_id", 2, "endpoint", "http://worker-2:8000", "block_size", 16));
        assertEquals(201, r.status(), String.valueOf(r.body()));
        ClusterHarness.Reply ready = call(port, h, "GET", "/ready", null);
        assertFalse(joining.isDone(), "the joiner is still recovering");
        assertEquals(503, ready.status(), String.valueOf(ready.body()));
        assertFalse(ready.body().get("ready").asBoolean());
        assertEquals(
            1, ready.body().get("schedulable_workers").asInt(), "it could serve: " + ready.body());
        assertEquals(
            PeerSync.RECOVERING,
            ready.body().path("reason").asText(),
            String.valueOf(ready.body()));
      } finally {
        for (Held x : held) {
          x.context().runOnContext(v -> x.delivery().next());
        }
      }
      KvselectNode b = joining.get(90, TimeUnit.SECONDS);
      h.nodes.add(b);
      assertEquals("done", b.peerSync().recovery().state());
      ClusterHarness.Reply ready = h.get(b, "/ready");
      assertEquals(200, ready.status(), String.valueOf(ready.body()));
      assertTrue(ready.body().get("ready").asBoolean());
      assertTrue(ready.body().path("reason").isMissingNode(), String.valueOf(ready.body()));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> h.get(b, "/ready").body().get("schedulable_workers").asInt() == 2);
    }
  }

  private static ClusterHarness.Reply call(
      int port, ClusterHarness h, String method, String path, Object body) throws Exception {
    java.net.http.HttpRequest.Builder b =
        java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10));
    if (body == null) {
      b.method(method, java.net.http.HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("content-type", "application/json")
          .method(
              method,
              java.net.http.HttpRequest.BodyPublishers.ofString(
                  ClusterHarness.JSON.writeValueAsString(body)));
    }
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    return new ClusterHarness.Reply(
        r.statusCode(), r.body().isEmpty() ? null : ClusterHarness.JSON.readTree(r.body()));
  }
}
