package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.KvcSnapshot;
import io.kvselect.core.kvc.KvcState;
import io.kvselect.core.kvc.KvcStateContract;
import io.kvselect.core.kvc.ResetScope;
import io.kvselect.testing.Ports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link HazelcastKvcState} on three real members (loopback, random cluster name, the jar's
 * cluster.xml): {@link KvcStateContract} with a handle on each member (one state whichever member
 * asks, every call atomic under concurrent dispatches from all three), then what only the
 * cluster has (idle sessions forgotten, the maps' backups).
 */
class HazelcastKvcStateTest {

  /** {@link KvcStateContract}: handle i is a state on member i. */
  @Nested
  class Contract extends KvcStateContract {
    @Override
    protected KvcState state(int handle) {
      return HazelcastKvcStateTest.state(handle);
    }
  }

  private static final WorkerRank W1 = new WorkerRank(1, 0);
  private static final WorkerRank W2 = new WorkerRank(2, 0);
  private static final WorkerRank W3 = new WorkerRank(3, 0);

  private static final List<HazelcastInstance> MEMBERS = new ArrayList<>();
  private static ExecutorService pool;

  @BeforeAll
  static void members() throws Exception {
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
    int base = Ports.freeRange(3);
    ClusterSettings s =
        new ClusterSettings(
            true,
            "kvs-test-" + UUID.randomUUID(),
            List.of("127.0.0.1:" + base, "127.0.0.1:" + (base + 1), "127.0.0.1:" + (base + 2)),
            base,
            "127.0.0.1",
            0);
    for (int i = 0; i < 3; i++) {
      MEMBERS.add(Hazelcast.newHazelcastInstance(ClusterBootstrap.config(s, 1000)));
    }
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> MEMBERS.get(0).getCluster().getMembers().size() == 3);
    pool = Executors.newFixedThreadPool(3);
  }

  @AfterAll
  static void stop() throws Exception {
    for (HazelcastInstance hz : MEMBERS) {
      hz.shutdown();
    }
    if (pool != null) {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** A state on member {@code i}; stages complete on a pool thread, as the node's loops would take them. */
  private static HazelcastKvcState state(int i) {
    return new HazelcastKvcState(MEMBERS.get(i), Runnable::run, pool);
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static String partition() {
    return "p-" + UUID.randomUUID();
  }

  @Test
  void aSessionSilentPastItsIdleTimeIsForgottenWhileTheCountersStay() throws Exception {
    String p = partition();
    HazelcastKvcState shortLived =
        new HazelcastKvcState(MEMBERS.get(0), Duration.ofSeconds(5), Runnable::run, pool);
    get(shortLived.admitted(p, "gone", W1, ResetScope.WINNER));
    get(shortLived.rejected(p, "gone", W2));
    assertEquals(W1, get(state(1).snapshot(p, "gone")).pin());
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> get(state(2).snapshot(p, "gone")).pin() == null);
    KvcSnapshot after = get(state(2).snapshot(p, "gone"));
    assertEquals(Map.of(), after.rejects());
    assertEquals(0, after.turns());
    assertEquals(Map.of(W1, 1L), after.assigned(), "per-worker counters are not per-session state");
  }

  @Test
  void theStateMapsKeepOneSynchronousBackup() {
    for (String name : List.of(HazelcastKvcState.SESSIONS_MAP, HazelcastKvcState.WORKERS_MAP)) {
      assertEquals(1, MEMBERS.get(0).getConfig().findMapConfig(name).getBackupCount(), name);
      assertEquals(0, MEMBERS.get(0).getConfig().findMapConfig(name).getAsyncBackupCount(), name);
    }
  }
}
