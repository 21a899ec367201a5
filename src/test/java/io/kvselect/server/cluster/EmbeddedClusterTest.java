package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.server.bus.Kvselect;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.Ports;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Two applications, each with its own clustered Vert.x (a plain Hazelcast configuration of their
 * own, no kvselect map declared), each deploy kvselect with {@link Kvselect#deploy(Vertx,
 * NodeSettings)}: the two deployments form one kvselect cluster, as {@code bin/kvselect
 * --cluster} nodes do. A worker registered through one is known to the other, sessions bound
 * through one are honoured by the other (twenty sessions over two workers: independent tables
 * would agree on all of them once in a million), and a booking made through one is freed
 * through the other.
 */
class EmbeddedClusterTest {

  private static final long TIMEOUT_S = 60;

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
  }

  @Test
  void twoApplicationsDeployingKvselectShareSessionsCatalogAndLifecycle() throws Exception {
    String cluster = "kvs-test-" + UUID.randomUUID();
    int port = Ports.free();
    List<Vertx> apps = new ArrayList<>();
    try {
      HazelcastClusterManager first =
          new HazelcastClusterManager(
              ApplicationCluster.hazelcast(cluster, port, "127.0.0.1:" + port));
      apps.add(ApplicationCluster.vertx(first));
      int actual =
          first.getHazelcastInstance().getCluster().getLocalMember().getAddress().getPort();
      HazelcastClusterManager second =
          new HazelcastClusterManager(
              ApplicationCluster.hazelcast(cluster, Ports.free(), "127.0.0.1:" + actual));
      apps.add(ApplicationCluster.vertx(second));
      await().atMost(Duration.ofSeconds(TIMEOUT_S)).until(() -> first.getNodes().size() == 2);

      NodeSettings s =
          NodeSettings.parse(
              new String[] {
                "--host", "127.0.0.1", "--port", "0", "--session-affinity-ttl-secs", "600"
              },
              ClusterHarness.ENV);
      Kvselect a = get(Kvselect.deploy(apps.get(0), s));
      Kvselect b = get(Kvselect.deploy(apps.get(1), s));
      assertNotNull(a.peerSync(), "a clustered Vert.x gets node-to-node sync");
      assertEquals(
          "done",
          b.peerSync().recovery().state(),
          "the second copied the first's catalog and index");
      JsonNode view = ApplicationCluster.call(b, "GET", "/cluster", null).body();
      assertEquals(cluster, view.path("name").asText(), String.valueOf(view));
      assertEquals(2, view.path("members").size(), String.valueOf(view));

      // a catalog change published before the peer's subscription to the sync stream has reached
      // this node is lost for good (catalog changes carry no digest: a known hole in
      // docs/cluster.md, seen here once in a fresh-clone run): wait until each node has heard the
      // other's stream (the periodic digests) before changing the catalog
      await()
          .atMost(Duration.ofSeconds(TIMEOUT_S))
          .until(
              () ->
                  a.peerSync().stats().received.get() > 0
                      && b.peerSync().stats().received.get() > 0);
      for (int w = 1; w <= 2; w++) {
        assertEquals(
            201,
            ApplicationCluster.call(
                    a,
                    "POST",
                    "/workers",
                    Map.of(
                        "worker_id",
                        w,
                        "endpoint",
                        "http://worker-" + w + ":8000",
                        "block_size",
                        16))
                .status());
      }
      await()
          .atMost(Duration.ofSeconds(TIMEOUT_S))
          .until(() -> b.service().listWorkers(null, null).size() == 2);

      Map<String, Long> bound = new LinkedHashMap<>();
      for (int i = 0; i < 20; i++) {
        ApplicationCluster.Reply r =
            ApplicationCluster.call(
                a,
                "POST",
                "/select_and_reserve",
                Map.of(
                    "session_id",
                    "s-" + i,
                    "selection_id",
                    "booked-" + i,
                    "token_ids",
                    ClusterSharedStateTest.tokens(i, 32)));
        assertEquals(200, r.status(), String.valueOf(r.body()));
        bound.put("s-" + i, r.body().path("worker_id").asLong());
      }
      assertTrue(
          bound.containsValue(1L) && bound.containsValue(2L), "both workers were chosen: " + bound);
      for (var e : bound.entrySet()) {
        ApplicationCluster.Reply r =
            ApplicationCluster.call(
                b,
                "POST",
                "/select",
                Map.of(
                    "session_id", e.getKey(), "token_ids", ClusterSharedStateTest.tokens(500, 32)));
        assertEquals(200, r.status(), String.valueOf(r.body()));
        assertEquals(
            e.getValue(),
            r.body().path("worker_id").asLong(),
            e.getKey() + " through the other application");
      }
      assertEquals(
          200, ApplicationCluster.call(b, "DELETE", "/reservations/booked-0", null).status());
      assertEquals(19, a.service().bookingCount(), "freed where it was booked");

      get(b.undeploy());
      get(a.undeploy());
    } finally {
      for (Vertx v : apps) {
        get(v.close());
      }
    }
  }
}
