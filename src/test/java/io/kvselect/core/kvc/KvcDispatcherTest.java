package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class KvcDispatcherTest {

  static final String PART = "m/g";

  static List<WorkerRank> ranks(int n, int base) {
    List<WorkerRank> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new WorkerRank(base + i, 0));
    }
    return out;
  }

  static final List<WorkerRank> D = ranks(3, 10);
  static final List<WorkerRank> P = ranks(2, 1);

  static KvcOutcome run(
      KvcDispatcher k,
      KvcRequest r,
      KvcParams p,
      Map<WorkerRank, Long> overlap,
      Admission a,
      boolean record) {
    return k.dispatch(PART, r, p, D, d -> overlap.getOrDefault(d, 0L), P, a, record)
        .toCompletableFuture()
        .join();
  }

  /** Admits with {@code mode} where {@code yes} holds, rejects with "x" elsewhere. */
  static Admission only(java.util.function.Predicate<WorkerRank> yes, KvcMode mode) {
    return (d, r) ->
        CompletableFuture.completedFuture(
            yes.test(d) ? AdmitDecision.admit(mode) : AdmitDecision.reject("x"));
  }

  /**
   * One dispatch from a fresh state: which worker admits (-1 none), the overlap per worker, the
   * expected mode, decode worker index, and number of rejected probes.
   */
  static Stream<Arguments> table() {
    return Stream.of(
        Arguments.of(
            "best overlap admits directly", 1, new long[] {0, 8, 2}, "direct", 1, 0, false),
        Arguments.of(
            "best overlap rejects, the next admits as reseed",
            2,
            new long[] {0, 8, 2},
            "reseed",
            2,
            1,
            true),
        Arguments.of(
            "only the third choice admits: epsilon = 2 probes, then fallback",
            0,
            new long[] {0, 8, 2},
            "fallback",
            0,
            2,
            true),
        Arguments.of(
            "epsilon exhausted: fallback on round-robin D",
            -1,
            new long[] {0, 8, 2},
            "fallback",
            0,
            2,
            true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void dispatchTable(
      String name,
      int admits,
      long[] overlap,
      String mode,
      int decode,
      int rejects,
      boolean pinnedElsewhere) {
    LocalKvcState st = new LocalKvcState();
    KvcDispatcher k = new KvcDispatcher(st);
    Map<WorkerRank, Long> ov = new HashMap<>();
    for (int i = 0; i < overlap.length; i++) {
      ov.put(D.get(i), overlap[i]);
    }
    st.admitted(PART, "s", D.get(1), ResetScope.WINNER);
    st.finished(PART, D.get(1));
    KvcMode m = "direct".equals(mode) ? KvcMode.DIRECT : KvcMode.RESEED;
    KvcOutcome o =
        run(
            k,
            new KvcRequest("s", 5, 20_000, 300),
            KvcParams.defaults(),
            ov,
            only(d -> admits >= 0 && d.equals(D.get(admits)), m),
            true);
    assertEquals(mode, o.mode().wire(), name);
    assertEquals(D.get(decode), o.decode(), name);
    assertEquals(rejects, o.attempts().size(), name);
    assertEquals(pinnedElsewhere && o.mode() != KvcMode.FALLBACK, o.migrated(), name);
    if (o.mode() == KvcMode.DIRECT) {
      assertNull(o.prefill(), name);
    } else {
      assertTrue(P.contains(o.prefill()), name);
    }
    KvcSnapshot snap = st.snapshot(PART, "s").toCompletableFuture().join();
    for (KvcOutcome.Attempt a : o.attempts()) {
      assertEquals(1, snap.rejects().get(a.rank()), name + ": a reject is counted once");
    }
    assertEquals(1L, snap.inflight().get(o.decode()), name + ": in-flight counted");
    assertEquals(o.mode() == KvcMode.FALLBACK ? D.get(1) : o.decode(), snap.pin(), name + ": pin");
  }

  @Test
  void fallbackRoundRobinsDecodeAndPrefill() {
    KvcDispatcher k = new KvcDispatcher(new LocalKvcState());
    List<WorkerRank> ds = new ArrayList<>();
    List<WorkerRank> ps = new ArrayList<>();
    KvcParams p = KvcParams.defaults().withEpsilon(0);
    for (int i = 0; i < 6; i++) {
      KvcOutcome o =
          run(
              k,
              new KvcRequest("s" + i, 0, 100, 100),
              p,
              Map.of(),
              only(d -> true, KvcMode.SEED),
              true);
      assertEquals(KvcMode.FALLBACK, o.mode());
      ds.add(o.decode());
      ps.add(o.prefill());
    }
    assertEquals(List.of(D.get(0), D.get(1), D.get(2), D.get(0), D.get(1), D.get(2)), ds);
    assertEquals(List.of(P.get(0), P.get(1), P.get(0), P.get(1), P.get(0), P.get(1)), ps);
  }

  @Test
  void refinementFallsBackOnTheDecodeWorkerWithTheLeastAccountedKv() {
    KvcDispatcher k = new KvcDispatcher(new LocalKvcState());
    KvcParams p = KvcParams.defaults().withCountWaiting(true);
    Map<WorkerRank, Long> kv = new HashMap<>(Map.of(D.get(0), 500L, D.get(1), 90L, D.get(2), 300L));
    List<WorkerRank> ds = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      KvcOutcome o =
          k.dispatch(
                  PART,
                  new KvcRequest("s" + i, 3, 100, 100),
                  p,
                  D,
                  d -> 0,
                  kv::get,
                  P,
                  only(d -> false, KvcMode.RESEED),
                  true)
              .toCompletableFuture()
              .join();
      assertEquals(KvcMode.FALLBACK, o.mode());
      assertEquals(2, o.attempts().size(), "epsilon probes first");
      ds.add(o.decode());
    }
    assertEquals(
        List.of(D.get(1), D.get(1), D.get(1)), ds, "not round robin: the least accounted KV");
    kv.put(D.get(2), 90L);
    List<WorkerRank> ties = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      ties.add(
          k.dispatch(
                  PART,
                  new KvcRequest("t" + i, 3, 100, 100),
                  p,
                  D,
                  d -> 0,
                  kv::get,
                  P,
                  only(d -> false, KvcMode.RESEED),
                  true)
              .toCompletableFuture()
              .join()
              .decode());
    }
    // the cursor stands at 3 and 4: ties go round-robin from D0 (to D1), then from D1 (to D1), ...
    assertEquals(List.of(D.get(1), D.get(1)), ties);
    WorkerRank third =
        k.dispatch(
                PART,
                new KvcRequest("t2", 3, 100, 100),
                p,
                D,
                d -> 0,
                kv::get,
                P,
                only(d -> false, KvcMode.RESEED),
                true)
            .toCompletableFuture()
            .join()
            .decode();
    assertEquals(D.get(2), third, "cursor at 5 starts at D2, which ties D1");
    KvcOutcome plain =
        k.dispatch(
                PART,
                new KvcRequest("u", 3, 100, 100),
                KvcParams.defaults(),
                D,
                d -> 0,
                kv::get,
                P,
                only(d -> false, KvcMode.RESEED),
                true)
            .toCompletableFuture()
            .join();
    assertEquals(
        D.get(0),
        plain.decode(),
        "without the refinement Fallback stays round robin (cursor at 6)");
  }

  @Test
  void refinementPinsAFallbackWhereItsKvWillLiveAndResetsThatCounter() {
    LocalKvcState st = new LocalKvcState();
    KvcDispatcher k = new KvcDispatcher(st);
    Map<WorkerRank, Long> kv = Map.of(D.get(0), 500L, D.get(1), 300L, D.get(2), 90L);
    st.admitted(PART, "s", D.get(0), ResetScope.WINNER);
    st.rejected(PART, "s", D.get(2));
    KvcParams refined = KvcParams.defaults().withCountWaiting(true).withEpsilon(1);
    KvcOutcome o =
        k.dispatch(
                PART,
                new KvcRequest("s", 1, 100, 100),
                refined,
                D,
                d -> 0,
                kv::get,
                P,
                only(d -> false, KvcMode.RESEED),
                true)
            .toCompletableFuture()
            .join();
    assertEquals(KvcMode.FALLBACK, o.mode());
    assertEquals(D.get(2), o.decode());
    KvcSnapshot after = st.snapshot(PART, "s").toCompletableFuture().join();
    assertEquals(
        D.get(2), after.pin(), "the session's KV will live on the Fallback's decode worker");
    assertEquals(
        Map.of(D.get(0), 1),
        after.rejects(),
        "that worker's counter is reset, the probed pin's counted");
    assertEquals(2, after.turns());

    st.admitted(PART, "t", D.get(0), ResetScope.WINNER);
    KvcOutcome plain =
        k.dispatch(
                PART,
                new KvcRequest("t", 1, 100, 100),
                KvcParams.defaults().withEpsilon(1),
                D,
                d -> 0,
                kv::get,
                P,
                only(d -> false, KvcMode.RESEED),
                true)
            .toCompletableFuture()
            .join();
    assertEquals(KvcMode.FALLBACK, plain.mode());
    assertEquals(
        D.get(0),
        st.snapshot(PART, "t").toCompletableFuture().join().pin(),
        "without the refinement a Fallback keeps the pin (Algorithm 3)");
  }

  @ParameterizedTest(name = "reset scope {0}")
  @MethodSource("scopes")
  void resetOnSuccessClearsPerScope(ResetScope scope, int d0After, int d1After) {
    LocalKvcState st = new LocalKvcState();
    KvcDispatcher k = new KvcDispatcher(st);
    KvcParams p = KvcParams.defaults().withResetScope(scope).withEpsilon(3);
    Map<WorkerRank, Long> ov = Map.of(D.get(0), 9L, D.get(1), 5L);
    KvcOutcome o =
        run(
            k,
            new KvcRequest("s", 1, 100, 10),
            p,
            ov,
            only(d -> d.equals(D.get(2)), KvcMode.RESEED),
            true);
    assertEquals(D.get(2), o.decode());
    o =
        run(
            k,
            new KvcRequest("s", 2, 100, 10),
            p,
            ov,
            only(d -> d.equals(D.get(1)), KvcMode.RESEED),
            true);
    assertEquals(D.get(1), o.decode());
    KvcSnapshot snap = st.snapshot(PART, "s").toCompletableFuture().join();
    assertEquals(d0After, snap.rejects().getOrDefault(D.get(0), 0));
    assertEquals(d1After, snap.rejects().getOrDefault(D.get(1), 0));
  }

  static Stream<Arguments> scopes() {
    return Stream.of(
        Arguments.of(ResetScope.WINNER, 2, 0),
        Arguments.of(ResetScope.ALL, 0, 0),
        Arguments.of(ResetScope.NONE, 2, 1));
  }

  @Test
  void aQueryRecordsNothing() {
    LocalKvcState st = new LocalKvcState();
    KvcDispatcher k = new KvcDispatcher(st);
    KvcOutcome o =
        run(
            k,
            new KvcRequest("s", 1, 100, 10),
            KvcParams.defaults().withEpsilon(3),
            Map.of(),
            only(d -> d.equals(D.get(2)), KvcMode.RESEED),
            false);
    assertEquals(D.get(2), o.decode());
    assertEquals(2, o.attempts().size());
    assertEquals(KvcSnapshot.EMPTY, st.snapshot(PART, "s").toCompletableFuture().join());
  }

  /**
   * Theorem 1: when some decode worker can admit the session, repeated dispatches reach an
   * admission after at most |D| * tau_reject rejects, and no dispatch probes more than epsilon
   * workers. The admitting worker is the one Route prefers least (no overlap, last in order).
   */
  @ParameterizedTest(name = "|D| {0}, tau_reject {1}")
  @MethodSource("theorem")
  void theoremOneBoundsRetries(int n, int tau) {
    List<WorkerRank> ds = ranks(n, 100);
    WorkerRank good = ds.get(n - 1);
    Map<WorkerRank, Long> ov = new HashMap<>();
    for (int i = 0; i < n - 1; i++) {
      ov.put(ds.get(i), (long) (n - i));
    }
    KvcDispatcher k = new KvcDispatcher(new LocalKvcState());
    KvcParams p = KvcParams.defaults().withTauReject(tau);
    int rejects = 0;
    int dispatches = 0;
    KvcOutcome o;
    do {
      o =
          k.dispatch(
                  PART,
                  new KvcRequest("s", dispatches + 1, 100, 10),
                  p,
                  ds,
                  d -> ov.getOrDefault(d, 0L),
                  P,
                  only(good::equals, KvcMode.RESEED),
                  true)
              .toCompletableFuture()
              .join();
      assertTrue(o.attempts().size() <= p.epsilonFor(n), "probes per dispatch <= epsilon");
      rejects += o.attempts().size();
      dispatches++;
      assertTrue(dispatches <= n * tau + 1, "no livelock");
    } while (o.mode() == KvcMode.FALLBACK);
    assertEquals(good, o.decode());
    assertTrue(rejects <= n * tau, "rejects " + rejects + " <= |D|*tau_reject " + n * tau);
    assertEquals((n - 1) * tau, rejects, "each other worker is tried exactly until blacklisted");
  }

  static Stream<Arguments> theorem() {
    return Stream.of(
        Arguments.of(2, 1),
        Arguments.of(3, 3),
        Arguments.of(4, 2),
        Arguments.of(8, 3),
        Arguments.of(5, 5));
  }

  /**
   * The v1 thrashing scenario: a session served on one worker, a burst that saturates every decode
   * worker for ten turns (every probe rejected, so every worker ends blacklisted for it), then a
   * steady state where every tenth turn finds all workers briefly saturated again. Without
   * reset-on-success (v1) the counters only grow: every worker stays blacklisted, Route stays in
   * its degenerate branch, and each brief saturation moves the session to another worker, losing
   * its KV. With reset-on-success (winner or all) the first admission after the burst clears the
   * blacklist, a brief saturation leaves one reject that the next success clears, and the session
   * moves at most (|D|-1) * tau_reject times.
   */
  @ParameterizedTest(name = "reset scope {0}")
  @MethodSource("thrash")
  void resetOnSuccessPreventsV1Thrashing(ResetScope scope, boolean bounded) {
    LocalKvcState st = new LocalKvcState();
    KvcDispatcher k = new KvcDispatcher(st);
    KvcParams p = KvcParams.defaults().withResetScope(scope);
    WorkerRank[] home = {null};
    boolean[] saturated = {false};
    Admission a =
        (d, r) ->
            CompletableFuture.completedFuture(
                saturated[0]
                    ? AdmitDecision.reject(AdmitDecision.NO_CAPACITY)
                    : AdmitDecision.admit(d.equals(home[0]) ? KvcMode.DIRECT : KvcMode.RESEED));
    int migrationsAfterBurst = 0;
    int allBlacklisted = 0;
    for (int turn = 0; turn < 300; turn++) {
      saturated[0] = (turn >= 20 && turn < 30) || turn % 10 == 9;
      KvcOutcome o =
          k.dispatch(
                  PART,
                  new KvcRequest("s", turn, 1000, 100),
                  p,
                  D,
                  d -> d.equals(home[0]) ? 40L : 0L,
                  P,
                  a,
                  true)
              .toCompletableFuture()
              .join();
      if (o.mode() != KvcMode.FALLBACK) {
        if (turn >= 30 && o.migrated()) {
          migrationsAfterBurst++;
        }
        home[0] = o.decode();
      }
      KvcSnapshot snap = st.snapshot(PART, "s").toCompletableFuture().join();
      if (turn >= 30
          && D.stream().allMatch(d -> snap.rejects().getOrDefault(d, 0) >= p.tauReject())) {
        allBlacklisted++;
      }
    }
    int bound = (D.size() - 1) * p.tauReject();
    if (bounded) {
      assertTrue(
          migrationsAfterBurst <= bound, "migrations " + migrationsAfterBurst + " <= " + bound);
      assertEquals(0, allBlacklisted, "the blacklist clears after the burst");
    } else {
      assertTrue(migrationsAfterBurst > 3 * bound, "v1 keeps migrating: " + migrationsAfterBurst);
      assertEquals(270, allBlacklisted, "v1: every worker stays blacklisted");
    }
  }

  static Stream<Arguments> thrash() {
    return Stream.of(
        Arguments.of(ResetScope.WINNER, true),
        Arguments.of(ResetScope.ALL, true),
        Arguments.of(ResetScope.NONE, false));
  }
}
