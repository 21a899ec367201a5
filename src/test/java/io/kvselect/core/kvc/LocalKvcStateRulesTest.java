package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.index.WorkerRank;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * {@link LocalKvcState}'s own rules beyond the shared contract: the per-partition bound on
 * sessions (least recently used dropped), in-flight never below zero, round-robin cursors per
 * pool and partition, what a Fallback leaves alone, and a removed worker forgotten on every rank
 * and nowhere else.
 */
class LocalKvcStateRulesTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank A1 = new WorkerRank(1, 1);
  private static final WorkerRank B = new WorkerRank(2, 0);

  private static <T> T get(CompletionStage<T> s) {
    return s.toCompletableFuture().join();
  }

  @Test
  void theBoundOnSessionsMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new LocalKvcState(0));
    assertEquals(0, new LocalKvcState(1).sessions());
  }

  @Test
  void pastTheBoundTheLeastRecentlyUsedSessionIsForgotten() {
    LocalKvcState st = new LocalKvcState(2);
    get(st.admitted("p", "s1", A, ResetScope.WINNER));
    get(st.admitted("p", "s2", B, ResetScope.WINNER));
    assertEquals(
        A, get(st.snapshot("p", "s1")).pin(), "reading s1 makes s2 the least recently used");
    get(st.rejected("p", "s3", A));
    assertEquals(2, st.sessions());
    assertEquals(A, get(st.snapshot("p", "s1")).pin());
    assertEquals(KvcSnapshot.EMPTY.pin(), get(st.snapshot("p", "s2")).pin(), "s2 was dropped");
    assertEquals(0, get(st.snapshot("p", "s2")).turns());
    assertEquals(Map.of(A, 1), get(st.snapshot("p", "s3")).rejects());

    get(st.admitted("q", "s9", B, ResetScope.WINNER));
    assertEquals(3, st.sessions(), "the bound is per partition; sessions() counts every partition");
    assertEquals(
        A, get(st.snapshot("p", "s1")).pin(), "another partition's session evicts nothing here");
  }

  @Test
  void aBoundOfOneKeepsTheNewestSession() {
    LocalKvcState st = new LocalKvcState(1);
    get(st.admitted("p", "old", A, ResetScope.WINNER));
    get(st.admitted("p", "new", B, ResetScope.WINNER));
    assertEquals(1, st.sessions());
    assertEquals(B, get(st.snapshot("p", "new")).pin());
    assertNull(get(st.snapshot("p", "old")).pin());
  }

  @Test
  void inFlightCountsDownToZeroAndNoFurther() {
    LocalKvcState st = new LocalKvcState();
    get(st.finished("nowhere", A));
    assertEquals(
        KvcSnapshot.EMPTY,
        get(st.snapshot("nowhere", "s")),
        "finishing in an unknown partition creates none");
    get(st.admitted("p", "s", A, ResetScope.WINNER));
    get(st.fallback("p", "t", A));
    assertEquals(2L, get(st.snapshot("p", "s")).inflight().get(A));
    get(st.finished("p", A));
    assertEquals(1L, get(st.snapshot("p", "s")).inflight().get(A));
    get(st.finished("p", A));
    get(st.finished("p", A));
    get(st.finished("p", B));
    KvcSnapshot s = get(st.snapshot("p", "s"));
    assertEquals(Map.of(), s.inflight(), "absent means zero; never negative");
    assertEquals(2L, s.assigned().get(A), "finishing never takes back an assignment");
    get(st.admitted("p", "s", A, ResetScope.WINNER));
    assertEquals(
        1L, get(st.snapshot("p", "s")).inflight().get(A), "counting starts again from zero");
  }

  @Test
  void aFallbackCountsATurnAndLoadButKeepsThePinAndTheRejects() {
    LocalKvcState st = new LocalKvcState();
    get(st.admitted("p", "s", A, ResetScope.WINNER));
    get(st.rejected("p", "s", B));
    get(st.fallback("p", "s", B));
    KvcSnapshot s = get(st.snapshot("p", "s"));
    assertEquals(A, s.pin());
    assertEquals(Map.of(B, 1), s.rejects());
    assertEquals(2, s.turns());
    assertEquals(1L, s.inflight().get(B));
    assertEquals(1L, s.assigned().get(B));
    get(st.fallback("p", "new", B));
    KvcSnapshot n = get(st.snapshot("p", "new"));
    assertNull(n.pin(), "a first Fallback pins nothing");
    assertEquals(1, n.turns());
  }

  @Test
  void anAdmissionAnswersThePinItReplaced() {
    LocalKvcState st = new LocalKvcState();
    assertNull(get(st.admitted("p", "s", A, ResetScope.WINNER)));
    assertEquals(A, get(st.admitted("p", "s", B, ResetScope.WINNER)));
    assertEquals(B, get(st.admitted("p", "s", B, ResetScope.WINNER)));
    KvcSnapshot s = get(st.snapshot("p", "s"));
    assertEquals(3, s.turns());
    assertEquals(Map.of(A, 1L, B, 2L), s.assigned());
  }

  @Test
  void cursorsCountFromZeroPerPoolAndPerPartition() {
    LocalKvcState st = new LocalKvcState();
    assertEquals(0L, get(st.nextRoundRobin("p", "decode")));
    assertEquals(1L, get(st.nextRoundRobin("p", "decode")));
    assertEquals(0L, get(st.nextRoundRobin("p", "prefill")), "each pool has its own cursor");
    assertEquals(0L, get(st.nextRoundRobin("q", "decode")), "each partition has its own cursors");
    assertEquals(2L, get(st.nextRoundRobin("p", "decode")));
  }

  @Test
  void aRemovedWorkerIsForgottenOnEveryRankInEveryPartitionAndNothingElseIs() {
    LocalKvcState st = new LocalKvcState();
    get(st.admitted("p", "s", A1, ResetScope.WINNER));
    get(st.rejected("p", "s", A));
    get(st.rejected("p", "s", B));
    get(st.admitted("p", "t", B, ResetScope.WINNER));
    get(st.admitted("q", "u", A, ResetScope.WINNER));

    get(st.removeWorker(1));

    KvcSnapshot s = get(st.snapshot("p", "s"));
    assertNull(s.pin(), "a pin on any rank of the worker goes");
    assertEquals(Map.of(B, 1), s.rejects());
    assertEquals(Map.of(B, 1L), s.inflight());
    assertEquals(Map.of(B, 1L), s.assigned());
    assertEquals(1, s.turns(), "the session itself stays");
    assertEquals(B, get(st.snapshot("p", "t")).pin(), "another worker's pin stays");
    KvcSnapshot u = get(st.snapshot("q", "u"));
    assertNull(u.pin());
    assertEquals(Map.of(), u.inflight());
    assertEquals(3, st.sessions());
  }

  @Test
  void aSnapshotOfAnUnknownSessionCarriesThePartitionsCounters() {
    LocalKvcState st = new LocalKvcState();
    get(st.admitted("p", "s", A, ResetScope.WINNER));
    KvcSnapshot other = get(st.snapshot("p", "never-seen"));
    assertNull(other.pin());
    assertEquals(Map.of(), other.rejects());
    assertEquals(0, other.turns());
    assertEquals(
        Map.of(A, 1L), other.inflight(), "Route reads the worker counters for a first turn too");
    assertEquals(Map.of(A, 1L), other.assigned());
    assertEquals(1, st.sessions(), "reading creates no session");
  }
}
