package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * Dispatch (Algorithm 3) rules beyond the table of {@link KvcDispatcherTest}: the counters it
 * keeps (modes, rejects by reason, migrations, blacklist entries at exactly {@code tau_reject}),
 * a worker probed at most once per dispatch, where a seed's prefill comes from, and the edges
 * (no decode worker, no prefill worker, no probe budget).
 */
class KvcDispatcherRulesTest {

  private static final String PART = "m/g";
  private static final List<WorkerRank> D = KvcDispatcherTest.ranks(3, 10);
  private static final List<WorkerRank> P = KvcDispatcherTest.ranks(2, 1);

  private final LocalKvcState st = new LocalKvcState();
  private final KvcMetrics metrics = new KvcMetrics();
  private final KvcDispatcher k = new KvcDispatcher(st, metrics);

  private KvcOutcome dispatch(
      KvcRequest r,
      KvcParams p,
      List<WorkerRank> decode,
      List<WorkerRank> prefill,
      Admission a,
      boolean record) {
    return k.dispatch(PART, r, p, decode, d -> 0, prefill, a, record).toCompletableFuture().join();
  }

  private KvcSnapshot snap(String s) {
    return st.snapshot(PART, s).toCompletableFuture().join();
  }

  private static Admission rejectWith(String reason) {
    return (d, r) -> CompletableFuture.completedFuture(AdmitDecision.reject(reason));
  }

  @Test
  void theDispatcherExposesItsStateAndMetrics() {
    assertSame(st, k.state());
    assertSame(metrics, k.metrics());
    KvcDispatcher plain = new KvcDispatcher(st);
    assertSame(st, plain.state());
    assertEquals(0, plain.metrics().rejectsTotal());
  }

  @Test
  void noDecodeWorkerFailsTheStage() {
    CompletionException e =
        assertThrows(
            CompletionException.class,
            () ->
                dispatch(
                    new KvcRequest("s", 0, 10, 10),
                    KvcParams.defaults(),
                    List.of(),
                    P,
                    KvcDispatcherTest.only(d -> true, KvcMode.SEED),
                    true));
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
  }

  @Test
  void recordedDispatchesAreCountedByModeAndRejectsByReason() {
    KvcParams p = KvcParams.defaults().withEpsilon(3);
    dispatch(
        new KvcRequest("a", 0, 10, 10),
        p,
        D,
        P,
        KvcDispatcherTest.only(d -> true, KvcMode.SEED),
        true);
    dispatch(new KvcRequest("b", 0, 10, 10), p, D, P, rejectWith(AdmitDecision.NO_CAPACITY), true);
    dispatch(
        new KvcRequest("c", 0, 10, 10),
        p,
        D,
        P,
        (d, r) ->
            CompletableFuture.completedFuture(
                d.equals(D.get(1))
                    ? AdmitDecision.reject(null)
                    : AdmitDecision.admit(KvcMode.RESEED)),
        true);
    assertEquals(1, metrics.requests(KvcMode.SEED));
    assertEquals(1, metrics.requests(KvcMode.FALLBACK));
    assertEquals(1, metrics.requests(KvcMode.RESEED));
    assertEquals(0, metrics.requests(KvcMode.DIRECT));
    assertEquals(
        Map.of("no-d-capacity", 3L, "unknown", 1L),
        metrics.rejects(),
        "a reason-less reject is 'unknown'");
    assertEquals(4, metrics.rejectsTotal());
    assertEquals(
        List.of("no-d-capacity", "unknown"), new ArrayList<>(metrics.rejects().keySet()), "sorted");
    assertEquals(0, metrics.migrations());
    assertEquals(0, metrics.blacklistEntries(), "tau_reject 3: one reject each blacklists nobody");
  }

  @Test
  void aQueryCountsNothing() {
    dispatch(
        new KvcRequest("a", 0, 10, 10),
        KvcParams.defaults().withEpsilon(3),
        D,
        P,
        rejectWith(AdmitDecision.NO_CAPACITY),
        false);
    assertEquals(0, metrics.rejectsTotal());
    assertEquals(0, metrics.requests(KvcMode.FALLBACK));
    assertEquals(KvcSnapshot.EMPTY, snap("a"));
  }

  @Test
  void aBlacklistEntryIsCountedWhenARejectReachesTauRejectAndOnlyThen() {
    KvcParams p = KvcParams.defaults().withTauReject(2).withEpsilon(1);
    List<WorkerRank> one = List.of(D.get(0));
    Admission no = rejectWith(AdmitDecision.NO_CAPACITY);
    dispatch(new KvcRequest("s", 1, 10, 10), p, one, P, no, true);
    assertEquals(0, metrics.blacklistEntries(), "1 of 2");
    dispatch(new KvcRequest("s", 2, 10, 10), p, one, P, no, true);
    assertEquals(1, metrics.blacklistEntries(), "2 of 2: blacklisted now");
    dispatch(new KvcRequest("s", 3, 10, 10), p, one, P, no, true);
    assertEquals(1, metrics.blacklistEntries(), "3 of 2: already blacklisted, not a new entry");
    assertEquals(3, snap("s").rejects().get(D.get(0)));
  }

  @Test
  void aMigrationIsAnAdmissionAwayFromThePinAndIsCounted() {
    KvcParams p = KvcParams.defaults();
    st.admitted(PART, "s", D.get(0), ResetScope.WINNER);
    KvcOutcome stay =
        dispatch(
            new KvcRequest("s", 1, 10, 1),
            p,
            D,
            P,
            KvcDispatcherTest.only(d -> true, KvcMode.DIRECT),
            true);
    assertEquals(D.get(0), stay.decode(), "the pin's sticky bonus");
    assertEquals(D.get(0), stay.previousPin());
    assertFalse(stay.migrated());
    KvcOutcome move =
        dispatch(
            new KvcRequest("s", 2, 10, 1),
            p,
            D,
            P,
            KvcDispatcherTest.only(d -> !d.equals(D.get(0)), KvcMode.RESEED),
            true);
    assertTrue(move.migrated());
    assertEquals(D.get(0), move.previousPin());
    assertEquals(1, metrics.migrations());
    assertEquals(move.decode(), snap("s").pin());
    KvcOutcome query =
        dispatch(
            new KvcRequest("s", 3, 10, 1),
            p,
            D,
            P,
            KvcDispatcherTest.only(
                d -> d.equals(D.get(2)) && !d.equals(move.decode()), KvcMode.RESEED),
            false);
    assertEquals(move.decode(), query.previousPin(), "a query reports the pin it read");
    assertEquals(1, metrics.migrations(), "and counts no migration");
  }

  @Test
  void aFirstAdmissionIsNoMigration() {
    KvcOutcome o =
        dispatch(
            new KvcRequest("s", 0, 10, 10),
            KvcParams.defaults(),
            D,
            P,
            KvcDispatcherTest.only(d -> true, KvcMode.SEED),
            true);
    assertNull(o.previousPin());
    assertFalse(o.migrated());
    assertEquals(0, metrics.migrations());
  }

  @Test
  void eachWorkerIsProbedAtMostOncePerDispatch() {
    List<WorkerRank> probed = new ArrayList<>();
    Admission a =
        (d, r) -> {
          probed.add(d);
          return CompletableFuture.completedFuture(AdmitDecision.reject(AdmitDecision.NO_CAPACITY));
        };
    KvcOutcome o =
        dispatch(
            new KvcRequest("s", 1, 10, 10), KvcParams.defaults().withEpsilon(10), D, P, a, true);
    assertEquals(KvcMode.FALLBACK, o.mode());
    assertEquals(3, probed.size(), "epsilon 10 but only three workers to ask: " + probed);
    assertEquals(3, probed.stream().distinct().count());
    assertEquals(
        probed,
        o.attempts().stream().map(KvcOutcome.Attempt::rank).toList(),
        "attempts in probe order");
    assertTrue(o.attempts().stream().allMatch(x -> AdmitDecision.NO_CAPACITY.equals(x.reason())));
  }

  @Test
  void aZeroProbeBudgetFallsBackWithoutAskingAnyone() {
    List<WorkerRank> probed = new ArrayList<>();
    Admission a =
        (d, r) -> {
          probed.add(d);
          return CompletableFuture.completedFuture(AdmitDecision.admit(KvcMode.SEED));
        };
    KvcOutcome o =
        dispatch(
            new KvcRequest("s", 0, 10, 10), KvcParams.defaults().withEpsilon(0), D, P, a, true);
    assertEquals(KvcMode.FALLBACK, o.mode());
    assertEquals(List.of(), probed);
    assertEquals(List.of(), o.attempts());
  }

  @Test
  void seedsTakeTheirPrefillWorkersInRoundRobinAndDirectNeedsNone() {
    List<WorkerRank> prefills = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      KvcOutcome o =
          dispatch(
              new KvcRequest("s" + i, 0, 10, 10),
              KvcParams.defaults(),
              D,
              P,
              KvcDispatcherTest.only(d -> true, i % 2 == 0 ? KvcMode.SEED : KvcMode.RESEED),
              true);
      prefills.add(o.prefill());
    }
    assertEquals(List.of(P.get(0), P.get(1), P.get(0), P.get(1)), prefills);
    KvcOutcome direct =
        dispatch(
            new KvcRequest("d", 1, 10, 1),
            KvcParams.defaults(),
            D,
            P,
            KvcDispatcherTest.only(d -> true, KvcMode.DIRECT),
            true);
    assertNull(direct.prefill());
    assertEquals(
        4L,
        st.nextRoundRobin(PART, KvcDispatcher.PREFILL_POOL).toCompletableFuture().join(),
        "a direct admission does not move the prefill cursor");
  }

  @Test
  void withoutPrefillWorkersSeedsAndFallbacksNameNone() {
    KvcOutcome seed =
        dispatch(
            new KvcRequest("s", 0, 10, 10),
            KvcParams.defaults(),
            D,
            List.of(),
            KvcDispatcherTest.only(d -> true, KvcMode.SEED),
            true);
    assertEquals(KvcMode.SEED, seed.mode());
    assertNull(seed.prefill());
    KvcOutcome fb =
        dispatch(
            new KvcRequest("t", 0, 10, 10),
            KvcParams.defaults().withEpsilon(0),
            D,
            List.of(),
            KvcDispatcherTest.only(d -> true, KvcMode.SEED),
            true);
    assertEquals(KvcMode.FALLBACK, fb.mode());
    assertNull(fb.prefill());
    assertEquals(
        0L,
        st.nextRoundRobin(PART, KvcDispatcher.PREFILL_POOL).toCompletableFuture().join(),
        "no prefill cursor was used");
  }

  @Test
  void aFallbackReportsThePinItLeavesInPlace() {
    st.admitted(PART, "s", D.get(1), ResetScope.WINNER);
    KvcOutcome o =
        dispatch(
            new KvcRequest("s", 1, 10, 10),
            KvcParams.defaults(),
            D,
            P,
            rejectWith(AdmitDecision.NO_CAPACITY),
            true);
    assertEquals(KvcMode.FALLBACK, o.mode());
    assertEquals(D.get(1), o.previousPin());
    assertFalse(o.migrated(), "a Fallback never counts as a migration");
    assertEquals(1, metrics.requests(KvcMode.FALLBACK));
    assertEquals(D.get(1), snap("s").pin());
    assertEquals(2, snap("s").turns());
  }

  @Test
  void aBlacklistedPinIsSkippedByRouteWhenAnotherWorkerIsOpen() {
    KvcParams p = KvcParams.defaults().withTauReject(1).withEpsilon(1);
    st.admitted(PART, "s", D.get(0), ResetScope.WINNER);
    st.rejected(PART, "s", D.get(0));
    List<WorkerRank> probed = new ArrayList<>();
    Admission a =
        (d, r) -> {
          probed.add(d);
          return CompletableFuture.completedFuture(AdmitDecision.admit(KvcMode.RESEED));
        };
    KvcOutcome o =
        k.dispatch(
                PART,
                new KvcRequest("s", 1, 10, 10),
                p,
                D,
                d -> d.equals(D.get(0)) ? 50 : 0,
                P,
                a,
                true)
            .toCompletableFuture()
            .join();
    assertEquals(
        List.of(D.get(1)), probed, "the pin with all the overlap is blacklisted at tau_reject 1");
    assertEquals(D.get(1), o.decode());
  }

  private long cursor(String pool) {
    return st.nextRoundRobin(PART, pool).toCompletableFuture().join();
  }

  /** A query ({@code record == false}) answers what a booking would get and moves no cursor. */
  @Test
  void aQueryFallbackAndAQuerySeedMoveNoRoundRobinCursor() {
    KvcParams none = KvcParams.defaults().withEpsilon(0);
    KvcOutcome q1 =
        dispatch(
            new KvcRequest("q", 0, 10, 10),
            none,
            D,
            P,
            KvcDispatcherTest.only(d -> true, KvcMode.SEED),
            false);
    KvcOutcome q2 =
        dispatch(
            new KvcRequest("q", 0, 10, 10),
            none,
            D,
            P,
            KvcDispatcherTest.only(d -> true, KvcMode.SEED),
            false);
    assertEquals(KvcMode.FALLBACK, q1.mode());
    assertEquals(D.get(0), q1.decode());
    assertEquals(P.get(0), q1.prefill());
    assertEquals(q1.decode(), q2.decode(), "a second query sees the same cursors");
    assertEquals(q1.prefill(), q2.prefill());
    KvcOutcome seed =
        dispatch(
            new KvcRequest("s", 0, 10, 10),
            KvcParams.defaults(),
            D,
            P,
            KvcDispatcherTest.only(d -> true, KvcMode.SEED),
            false);
    assertEquals(P.get(0), seed.prefill(), "the prefill a booking would get next");
    KvcOutcome booked =
        dispatch(
            new KvcRequest("b", 0, 10, 10),
            none,
            D,
            P,
            KvcDispatcherTest.only(d -> true, KvcMode.SEED),
            true);
    assertEquals(q1.decode(), booked.decode(), "the booking gets what the queries were told");
    assertEquals(q1.prefill(), booked.prefill());
    assertEquals(1L, cursor(KvcDispatcher.DECODE_POOL), "only the booking moved the decode cursor");
    assertEquals(
        1L, cursor(KvcDispatcher.PREFILL_POOL), "only the booking moved the prefill cursor");
  }
}
