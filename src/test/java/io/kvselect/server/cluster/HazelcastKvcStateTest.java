package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.AdmitDecision;
import io.kvselect.core.kvc.KvcDispatcher;
import io.kvselect.core.kvc.KvcMode;
import io.kvselect.core.kvc.KvcOutcome;
import io.kvselect.core.kvc.KvcParams;
import io.kvselect.core.kvc.KvcRequest;
import io.kvselect.core.kvc.KvcSnapshot;
import io.kvselect.core.kvc.ResetScope;
import io.kvselect.testing.Ports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link HazelcastKvcState} on three real members (loopback, random cluster name, the jar's
 * cluster.xml): one state whichever member asks, and every call atomic under concurrent
 * dispatches from all three.
 */
class HazelcastKvcStateTest {

  private static final WorkerRank W1 = new WorkerRank(1, 0);
  private static final WorkerRank W2 = new WorkerRank(2, 0);
  private static final WorkerRank W3 = new WorkerRank(3, 0);

  private static final List<HazelcastInstance> MEMBERS = new ArrayList<>();
  private static ExecutorService pool;

  @BeforeAll
  static void members() throws Exception {
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
    int base = Ports.freeRange(3);
    ClusterSettings s = new ClusterSettings(true, "kvs-test-" + UUID.randomUUID(),
        List.of("127.0.0.1:" + base, "127.0.0.1:" + (base + 1), "127.0.0.1:" + (base + 2)), base, "127.0.0.1", 0);
    for (int i = 0; i < 3; i++) {
      MEMBERS.add(Hazelcast.newHazelcastInstance(ClusterBootstrap.config(s, 1000)));
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> MEMBERS.get(0).getCluster().getMembers().size() == 3);
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
  void everyMemberSeesOnePinOneSetOfRejectsAndOneTurnCount() throws Exception {
    String p = partition();
    HazelcastKvcState a = state(0);
    HazelcastKvcState b = state(1);
    HazelcastKvcState c = state(2);
    assertNull(get(a.admitted(p, "s", W1, ResetScope.WINNER)), "no pin before the first admission");
    get(b.rejected(p, "s", W1));
    get(c.rejected(p, "s", W1));
    get(c.rejected(p, "s", W2));
    KvcSnapshot seen = get(b.snapshot(p, "s"));
    assertEquals(W1, seen.pin());
    assertEquals(Map.of(W1, 2, W2, 1), seen.rejects(), "rejects from two members add up");
    assertEquals(1, seen.turns());
    assertEquals(Map.of(W1, 1L), seen.inflight());

    assertEquals(W1, get(c.admitted(p, "s", W2, ResetScope.WINNER)), "the migration reports the previous pin");
    KvcSnapshot moved = get(a.snapshot(p, "s"));
    assertEquals(W2, moved.pin(), "a migration decided on one member is the pin on the others");
    assertEquals(Map.of(W1, 2), moved.rejects(), "reset-on-success (winner) clears the admitting worker only");
    get(b.fallback(p, "s", W3));
    assertEquals(W2, get(b.admitted(p, "s", W1, ResetScope.ALL)));
    KvcSnapshot reset = get(c.snapshot(p, "s"));
    assertEquals(Map.of(), reset.rejects(), "reset-on-success (all) clears every counter");
    assertEquals(4, reset.turns());
    assertEquals(Map.of(W1, 2L, W2, 1L, W3, 1L), reset.assigned());

    get(a.finished(p, W1));
    get(b.finished(p, W1));
    get(c.finished(p, W1));
    assertEquals(Map.of(W2, 1L, W3, 1L), get(a.snapshot(p, "s")).inflight(), "in-flight never goes below 0");
    assertEquals(KvcSnapshot.EMPTY, get(a.snapshot(p + "x", "s")), "partitions are separate");

    get(c.rejected(p, "s", W2));
    get(c.removeWorker(1));
    KvcSnapshot gone = get(b.snapshot(p, "s"));
    assertNull(gone.pin(), "a removed worker is no pin");
    assertEquals(Map.of(W2, 1), gone.rejects());
    assertEquals(Map.of(W2, 1L, W3, 1L), gone.assigned());
  }

  @Test
  void concurrentDispatchesFromThreeMembersLoseNoUpdate() throws Exception {
    String p = partition();
    List<HazelcastKvcState> states = List.of(state(0), state(1), state(2));
    List<KvcDispatcher> dispatchers = new ArrayList<>();
    for (HazelcastKvcState s : states) {
      dispatchers.add(new KvcDispatcher(s));
    }
    List<WorkerRank> decode = List.of(W1, W2);
    // W1 refuses everything, W2 admits everything: each dispatch is one reject then one admission
    io.kvselect.core.kvc.Admission admission = (d, r) -> CompletableFuture.completedFuture(
        d.equals(W1) ? AdmitDecision.reject(AdmitDecision.NO_CAPACITY) : AdmitDecision.admit(KvcMode.RESEED));
    KvcParams params = KvcParams.defaults().withTauReject(1_000_000).withEpsilon(2);
    int perMember = 40;
    String[] sessions = {"s0", "s1", "s2", "s3"};
    List<CompletableFuture<KvcOutcome>> all = new ArrayList<>();
    List<CompletableFuture<Long>> cursors = new ArrayList<>();
    for (int i = 0; i < perMember; i++) {
      for (int m = 0; m < 3; m++) {
        String s = sessions[(i + m) % sessions.length];
        all.add(dispatchers.get(m).dispatch(p, new KvcRequest(s, 1, 100, 10), params, decode, d -> 0,
            List.of(W3), admission, true).toCompletableFuture());
        cursors.add(states.get(m).nextRoundRobin(p, "probe").toCompletableFuture());
      }
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    CompletableFuture.allOf(cursors.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    int n = perMember * 3;
    for (CompletableFuture<KvcOutcome> o : all) {
      assertEquals(W2, o.get().decode());
    }
    int turns = 0;
    int rejects = 0;
    for (String s : sessions) {
      KvcSnapshot snap = get(states.get(1).snapshot(p, s));
      assertEquals(W2, snap.pin());
      turns += snap.turns();
      rejects += snap.rejects().getOrDefault(W1, 0);
      assertEquals(Map.of(W2, (long) n), snap.assigned());
      assertEquals(Map.of(W2, (long) n), snap.inflight());
    }
    assertEquals(n, turns, "every admission counted one turn");
    // how many dispatches probed W1 first depends on whether they read the session before or after
    // a concurrent one pinned it on W2; every probe that was refused must be counted, none lost
    long probed = 0;
    for (CompletableFuture<KvcOutcome> o : all) {
      probed += o.get().attempts().stream().filter(a -> a.rank().equals(W1)).count();
    }
    assertTrue(probed > 0, "some dispatches probed the refusing worker");
    assertEquals(probed, rejects, "every reject counted");
    Set<Long> values = new HashSet<>();
    for (CompletableFuture<Long> c : cursors) {
      values.add(c.get());
    }
    assertEquals(n, values.size(), "each cursor value handed out once");
    assertTrue(values.contains(0L) && values.contains((long) n - 1));
  }

  @Test
  void aSessionSilentPastItsIdleTimeIsForgottenWhileTheCountersStay() throws Exception {
    String p = partition();
    HazelcastKvcState shortLived = new HazelcastKvcState(MEMBERS.get(0), Duration.ofSeconds(1), Runnable::run, pool);
    get(shortLived.admitted(p, "gone", W1, ResetScope.WINNER));
    get(shortLived.rejected(p, "gone", W2));
    assertEquals(W1, get(state(1).snapshot(p, "gone")).pin());
    await().atMost(Duration.ofSeconds(60)).until(() -> get(state(2).snapshot(p, "gone")).pin() == null);
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
