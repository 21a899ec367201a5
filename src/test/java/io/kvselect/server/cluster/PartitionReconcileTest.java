package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.config.RouterConfig;
import io.vertx.core.spi.cluster.ClusterManager;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A peer that vanishes from the membership and comes back with the same node id (a partition
 * that healed): its bookings are released after the grace, and restored by reconciliation once
 * it is a member again. Node B sees the cluster through a membership view that can hide A.
 */
class PartitionReconcileTest {

  private static final RouterConfig ROUTER =
      SyncTestNode.router("DYN_ROUTER_USE_KV_EVENTS", "false");

  /** {@code real} with {@code hidden} left out of {@code getNodes()} while {@code hide} is set. */
  private static ClusterManager hiding(ClusterManager real, AtomicBoolean hide, String[] hidden) {
    return (ClusterManager)
        Proxy.newProxyInstance(
            ClusterManager.class.getClassLoader(),
            new Class<?>[] {ClusterManager.class},
            (proxy, method, args) -> {
              try {
                Object r = method.invoke(real, args);
                if (method.getName().equals("getNodes") && hide.get()) {
                  List<String> nodes =
                      new ArrayList<>((List<?>) r)
                          .stream().map(String::valueOf).filter(n -> !n.equals(hidden[0])).toList();
                  return nodes;
                }
                return r;
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Test
  void aPeerBackAfterAPartitionIsReconciledAgain() throws Exception {
    SyncTestNode.Cluster cluster = SyncTestNode.Cluster.random();
    PeerSyncOptions opts = PeerSyncOptions.withInterval(Duration.ofSeconds(1));
    AtomicBoolean hide = new AtomicBoolean();
    String[] hidden = new String[1];
    try (SyncTestNode a = SyncTestNode.start(cluster, opts, ROUTER, false);
        SyncTestNode b =
            SyncTestNode.start(cluster, opts, ROUTER, false, m -> hiding(m, hide, hidden))) {
      hidden[0] = a.id();
      LoadSyncClusterTest.join(
          a.service.upsertWorker(LoadSyncClusterTest.worker(1, "split", null)));
      await().atMost(Duration.ofSeconds(20)).until(() -> b.service.worker(1) != null);
      LoadSyncClusterTest.join(
          a.service.select(LoadSyncClusterTest.request("split", "s-1", 8), true));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> LoadSyncClusterTest.requests(b.service, "split", 1) == 1);

      hide.set(true);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> LoadSyncClusterTest.requests(b.service, "split", 1) == 0);
      assertEquals(1, b.sync.stats().peersReleased.get());

      hide.set(false);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> LoadSyncClusterTest.requests(b.service, "split", 1) == 1);
      LoadSyncClusterTest.join(a.service.free("s-1"));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> LoadSyncClusterTest.requests(b.service, "split", 1) == 0);
    }
  }
}
