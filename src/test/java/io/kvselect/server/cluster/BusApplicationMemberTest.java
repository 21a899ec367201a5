package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.HazelcastInstance;
import io.kvselect.server.KvselectNode;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A separate Vert.x application that joins a kvselect cluster to use its event-bus API, as
 * {@code docs/event-bus.md} says to ({@link ClusterBootstrap#applicationConfig}: a lite member),
 * holds none of kvselect's state: after it dies abruptly (its Hazelcast terminated, as a SIGKILL
 * or Hazelcast's default TERMINATE shutdown hook does) and then one kvselect node dies abruptly
 * too, before any backup could be rebuilt, every session binding is still answered by both
 * survivors. (As a data member it owned about a quarter of the partitions: two abrupt losses in a
 * row with one backup lost bindings, 14 of 30 on one survivor in the field report.)
 */
class BusApplicationMemberTest {

  private static final int SESSIONS = 30;

  @Test
  void anApplicationMemberComingAndGoingThenANodeLossKeepsEveryBinding() throws Exception {
    try (ClusterHarness h = new ClusterHarness()) {
      List<KvselectNode> nodes = List.of(h.start(), h.start(), h.start());
      for (KvselectNode n : nodes) {
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> h.get(n, "/cluster").body().path("members").size() == 3);
      }
      h.registerWorkers(4);
      ClusterSettings app =
          new ClusterSettings(
              true, h.name, List.of(h.members(3).split(",")), h.basePort + 10, "127.0.0.1");
      HazelcastClusterManager appMgr =
          new HazelcastClusterManager(ClusterBootstrap.applicationConfig(app));
      Vertx appVertx = ApplicationCluster.vertx(appMgr);
      HazelcastInstance appHz = appMgr.getHazelcastInstance();
      assertTrue(
          appHz.getCluster().getLocalMember().isLiteMember(),
          "the application joins as a lite member");
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> h.get(nodes.get(0), "/cluster").body().path("members").size() == 4);
      Object workers =
          appVertx
              .eventBus()
              .request(
                  "kvselect.api.workers.list",
                  new JsonObject(),
                  new DeliveryOptions().setSendTimeout(10_000))
              .toCompletionStage()
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS)
              .body();
      assertEquals(4, ((JsonArray) workers).size());

      Map<String, Long> bound = new LinkedHashMap<>();
      for (int s = 0; s < SESSIONS; s++) {
        ClusterHarness.Reply r =
            h.post(
                nodes.get(s % 3),
                "/select_and_reserve",
                Map.of(
                    "session_id",
                    "conv-" + s,
                    "token_ids",
                    ClusterSharedStateTest.tokens(s, 32),
                    "selection_id",
                    "pre-" + s));
        assertEquals(200, r.status(), r.toString());
        bound.put("conv-" + s, r.body().path("worker_id").asLong());
      }
      assertEquals(
          0,
          appHz.getMap(ClusterBootstrap.SESSIONS_MAP).getLocalMapStats().getOwnedEntryCount(),
          "the application owns no binding");

      appHz.getLifecycleService().terminate();
      appVertx.close();
      KvselectNode lost = nodes.get(2);
      ((HazelcastClusterManager)
              ((io.vertx.core.internal.VertxInternal) lost.vertx()).clusterManager())
          .getHazelcastInstance()
          .getLifecycleService()
          .terminate();
      h.nodes.remove(lost);
      lost.vertx().close();
      List<KvselectNode> survivors = nodes.subList(0, 2);
      for (KvselectNode n : survivors) {
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> h.get(n, "/cluster").body().path("members").size() == 2);
      }
      for (var e : bound.entrySet()) {
        for (KvselectNode n : survivors) {
          ClusterHarness.Reply r =
              h.post(
                  n,
                  "/select",
                  Map.of(
                      "session_id",
                      e.getKey(),
                      "token_ids",
                      ClusterSharedStateTest.tokens(1000, 32)));
          assertEquals(200, r.status(), r.toString());
          assertEquals(
              e.getValue(),
              r.body().path("worker_id").asLong(),
              e.getKey() + " on a survivor: " + r);
        }
      }
    }
  }
}
