package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import io.kvselect.testing.Ports;
import io.vertx.core.Vertx;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A cluster manager handler that blocks (what vertx-hazelcast's {@code cleanSubs} does while a
 * departed member's partitions have no owner) no longer holds back the other membership
 * listeners and events: with the manager's monitor held, as a blocked handler holds it, node A's
 * own listener hears that B left, the manager's handler waits on its own thread, and entry events
 * of every key keep arriving. With Vert.x's own manager in its place, 34 of the 200 entry events
 * (one key in five or six) were held back for as long as the handler blocked (checked 2026-12-04).
 * Two clustered Vert.x instances in this JVM, loopback, a random cluster name.
 */
class MembershipHandoffTest {

  @Test
  @Timeout(120)
  void aBlockedManagerHandlerHoldsBackNoOtherListenerOrEvent() throws Exception {
    String cluster = "kvs-test-" + UUID.randomUUID();
    int port = Ports.free();
    HazelcastClusterManager aMgr =
        new MembershipHandoffClusterManager(
            ApplicationCluster.hazelcast(cluster, port, "127.0.0.1:" + port));
    Vertx a = ApplicationCluster.vertx(aMgr);
    try {
      HazelcastClusterManager bMgr =
          new HazelcastClusterManager(ApplicationCluster.joining(cluster, aMgr));
      Vertx b = ApplicationCluster.vertx(bMgr);
      await().atMost(Duration.ofSeconds(30)).until(() -> aMgr.getNodes().size() == 2);
      CountDownLatch heard = new CountDownLatch(1);
      aMgr.getHazelcastInstance()
          .getCluster()
          .addMembershipListener(
              new MembershipListener() {
                @Override
                public void memberAdded(MembershipEvent e) {}

                @Override
                public void memberRemoved(MembershipEvent e) {
                  heard.countDown();
                }
              });
      java.util.concurrent.atomic.AtomicInteger entryEvents =
          new java.util.concurrent.atomic.AtomicInteger();
      com.hazelcast.map.IMap<String, String> probe =
          aMgr.getHazelcastInstance().getMap("kvselect.test.handoff");
      probe.addEntryListener(
          (com.hazelcast.map.listener.EntryAddedListener<String, String>)
              e -> entryEvents.incrementAndGet(),
          false);
      synchronized (aMgr) {
        // B leaves while A's manager cannot run its handler (they are synchronized on the manager),
        // as when the handler waits in cleanSubs for partitions without an owner
        Thread closing =
            new Thread(() -> b.close().toCompletionStage().toCompletableFuture().join(), "close-b");
        closing.start();
        assertTrue(heard.await(30, TimeUnit.SECONDS), "A's own listener heard that B left");
        Thread handler =
            await()
                .atMost(Duration.ofSeconds(10))
                .until(
                    () ->
                        Thread.getAllStackTraces().keySet().stream()
                            .filter(
                                t ->
                                    t.getName().equals(MembershipHandoffClusterManager.THREAD)
                                        && t.getState() == Thread.State.BLOCKED)
                            .findFirst()
                            .orElse(null),
                    t -> t != null);
        assertEquals(
            MembershipHandoffClusterManager.THREAD,
            handler.getName(),
            "the handler waits on its own thread");
        // Hazelcast spreads events over its few event threads by key: with a handler blocking one
        // of
        // them, the events of about one key in five would wait for it
        for (int i = 0; i < 200; i++) {
          probe.put("k" + i, "v");
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> entryEvents.get() == 200);
        closing.join(TimeUnit.SECONDS.toMillis(30));
      }
      // released, the manager's handler runs: Vert.x on A forgets B
      await().atMost(Duration.ofSeconds(20)).until(() -> aMgr.getNodes().size() == 1);
    } finally {
      a.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
