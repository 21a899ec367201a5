package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.index.WorkerRank;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link ResidentModel}'s bookkeeping, which every Admit decision reads: a session's tokens per
 * worker (a put of zero or less forgets it), the promised tokens of unfinished requests (never
 * below zero), a worker forgotten whole, and the model as an {@link Admission} asking each
 * worker's own capacity.
 */
class ResidentModelRulesTest {

  private static final WorkerRank D = new WorkerRank(7, 0);
  private static final WorkerRank E = new WorkerRank(8, 0);

  @Test
  void aPutReplacesTheSessionsTokensAndZeroOrLessForgetsThem() {
    ResidentModel m = new ResidentModel();
    m.put(D, "s", 100);
    m.put(D, "t", 40);
    assertEquals(140, m.used(D));
    m.put(D, "s", 60);
    assertEquals(60, m.residentTokens(D, "s"), "a put replaces, it does not add");
    assertEquals(100, m.used(D));
    m.put(D, "s", 0);
    assertEquals(0, m.residentTokens(D, "s"));
    assertEquals(40, m.used(D));
    m.put(D, "t", -5);
    assertEquals(
        0, m.residentTokens(D, "t"), "a negative put forgets too, it never stores a negative");
    assertEquals(0, m.used(D));
    m.put(D, "u", 1);
    assertEquals(1, m.used(D), "a single token counts");
  }

  @Test
  void removingASessionTouchesOnlyThatSessionOnThatWorker() {
    ResidentModel m = new ResidentModel();
    m.put(D, "s", 100);
    m.put(D, "t", 10);
    m.put(E, "s", 30);
    m.remove(D, "s");
    m.remove(E, "nobody");
    m.remove(new WorkerRank(99, 0), "s");
    assertEquals(10, m.used(D));
    assertEquals(0, m.residentTokens(D, "s"));
    assertEquals(30, m.residentTokens(E, "s"), "the session's copy elsewhere stays");
    m.remove(D, "t");
    assertEquals(0, m.used(D));
    m.put(D, "t", 5);
    assertEquals(5, m.used(D), "a worker emptied by removals accepts new sessions");
  }

  @Test
  void promisedTokensAddUpAndNeverGoBelowZero() {
    ResidentModel m = new ResidentModel();
    assertEquals(0, m.waitingTokens(D));
    m.addWaiting(D, 300);
    m.addWaiting(D, 200);
    assertEquals(500, m.waitingTokens(D));
    m.addWaiting(D, -200);
    assertEquals(300, m.waitingTokens(D));
    m.addWaiting(D, -1000);
    assertEquals(0, m.waitingTokens(D), "clamped at zero");
    m.addWaiting(D, 50);
    assertEquals(50, m.waitingTokens(D), "a clamp leaves no debt behind");
    assertEquals(0, m.waitingTokens(E));
    assertEquals(0, m.used(D), "promises are not resident tokens");
  }

  @Test
  void aRemovedWorkerLosesItsSessionsAndItsPromisesAndOthersKeepTheirs() {
    ResidentModel m = new ResidentModel();
    m.put(D, "s", 100);
    m.addWaiting(D, 70);
    m.put(E, "s", 30);
    m.addWaiting(E, 20);
    m.removeWorker(D);
    assertEquals(0, m.used(D));
    assertEquals(0, m.waitingTokens(D));
    assertEquals(30, m.used(E));
    assertEquals(20, m.waitingTokens(E));
  }

  @Test
  void theAdmissionAsksEachWorkersOwnCapacity() {
    ResidentModel m = new ResidentModel();
    m.put(D, "other", 50);
    m.put(E, "other", 50);
    Map<WorkerRank, Long> capacity = Map.of(D, 100L, E, 1000L);
    Admission a = m.admission(capacity::get, KvcParams.defaults());
    KvcRequest r = new KvcRequest("s", 0, 60, 60);
    assertEquals(
        AdmitDecision.reject(AdmitDecision.NOT_RESIDENT_NO_CAPACITY),
        a.admit(D, r).toCompletableFuture().join(),
        "50 + 60 > 0.95 * 100");
    assertEquals(AdmitDecision.admit(KvcMode.SEED), a.admit(E, r).toCompletableFuture().join());
  }

  /** The capacity test is inclusive: exactly rho * K_d admits, one token more does not. */
  @Test
  void theHighWaterMarkIsInclusiveForResidentAndNewSessions() {
    ResidentModel m = new ResidentModel();
    KvcParams net = KvcParams.defaults().withAccounting(AdmitAccounting.NET).withRho(0.5);
    m.put(D, "s", 10);
    m.put(D, "other", 40);
    assertEquals(
        KvcMode.DIRECT,
        m.decide(D, new KvcRequest("s", 2, 10, 0), 100, net).mode(),
        "40 + 10 = 50");
    assertEquals(
        AdmitDecision.NO_CAPACITY, m.decide(D, new KvcRequest("s", 2, 11, 0), 100, net).reason());
    assertEquals(
        KvcMode.RESEED,
        m.decide(D, new KvcRequest("new", 2, 0, 0), 100, net.withRho(0.5)).mode(),
        "50 + 0 = 50");
    assertEquals(
        AdmitDecision.NOT_RESIDENT_NO_CAPACITY,
        m.decide(D, new KvcRequest("new", 2, 1, 1), 100, net).reason());
  }

  /** Under the refinement a resident session's only limit is the worker itself: input at K_d admits. */
  @Test
  void theRefinementAdmitsAResidentSessionUpToTheWholeWorker() {
    ResidentModel m = new ResidentModel();
    KvcParams refined = KvcParams.defaults().withCountWaiting(true).withTauAppend(1000);
    m.put(D, "s", 500);
    m.addWaiting(D, 5_000);
    assertEquals(
        KvcMode.DIRECT, m.decide(D, new KvcRequest("s", 3, 1000, 1000), 1000, refined).mode());
    assertEquals(
        AdmitDecision.NO_CAPACITY,
        m.decide(D, new KvcRequest("s", 3, 1001, 1000), 1000, refined).reason());
    assertEquals(
        AdmitDecision.LARGE_APPEND,
        m.decide(D, new KvcRequest("s", 3, 1001, 1001), 5000, refined).reason(),
        "the append limit still comes first");
  }

  private static long[] ids(long from, int n) {
    long[] a = new long[n];
    for (int i = 0; i < n; i++) {
      a[i] = from + i;
    }
    return a;
  }

  @Test
  void aBlockStoredAgainCountsOnceAndPassesItsOwnerToTheBlocksAfterIt() {
    ResidentModel m = new ResidentModel();
    m.claim(D, "s", ids(1000, 2), 16);
    m.stored(D, false, 0, ids(1, 2), ids(1000, 2));
    m.unclaim(D, "s");
    m.stored(D, false, 0, ids(1, 3), new long[] {1000, 1001, 9999});
    assertEquals(
        3 * 16, m.residentTokens(D, "s"), "blocks 1 and 2 known, block 3 continues s's chain");
    assertEquals(3 * 16, m.used(D));
  }

  @Test
  void withoutAParentTheFirstUnclaimedBlockIsNobodysWhateverParentHashIsPassed() {
    ResidentModel m = new ResidentModel();
    m.claim(D, "s", ids(1000, 1), 16);
    m.stored(D, false, 0, ids(1, 1), ids(1000, 1));
    m.stored(D, false, 1, ids(2, 1), ids(2000, 1));
    assertEquals(16, m.residentTokens(D, "s"), "hasParent false: block 2 does not extend block 1");
    assertEquals(2 * 16, m.used(D), "but it takes memory");
    m.stored(D, true, 1, ids(3, 1), ids(3000, 1));
    assertEquals(2 * 16, m.residentTokens(D, "s"), "with the parent named it is s's");
  }

  @Test
  void theBlockSizeIsWhatEachReportedBlockCountsFor() {
    ResidentModel m = new ResidentModel();
    m.blockTokens(D, 32);
    m.stored(D, false, 0, ids(1, 3), ids(100, 3));
    assertEquals(3 * 32, m.used(D), "unclaimed blocks count in the worker's memory");
    assertEquals(0, m.residentTokens(D, "s"), "and in no session's");
    assertEquals(0, m.used(E));
  }

  @Test
  void bookedAndReportedTokensAddUpAndTheAccountReadsBoth() {
    ResidentModel m = new ResidentModel();
    m.put(D, "s", 10);
    m.claim(D, "s", ids(100, 2), 16);
    m.stored(D, false, 0, ids(1, 2), ids(100, 2));
    m.addWaiting(D, 7);
    assertEquals(10 + 2 * 16, m.residentTokens(D, "s"));
    assertEquals(10 + 2 * 16, m.used(D));
    assertEquals(new KvcAccount(42, 7), m.account(D));
    assertEquals("42+7", m.account(D).toString());
    assertEquals(new KvcAccount(0, 0), m.account(E));
    KvcParams net = KvcParams.defaults().withAccounting(AdmitAccounting.NET).withRho(1.0);
    assertEquals(
        KvcMode.DIRECT,
        m.decide(D, new KvcRequest("s", 1, 100, 10), 100, net).mode(),
        "NET leaves the session's own 42 tokens out");
    assertEquals(
        AdmitDecision.NOT_RESIDENT_NO_CAPACITY,
        m.decide(D, new KvcRequest("t", 1, 59, 10), 100, net).reason(),
        "42 + 59 > 100");
  }

  @Test
  void eventsAboutARankNeverSeenChangeNothing() {
    ResidentModel m = new ResidentModel();
    m.unclaim(D, "s");
    m.removed(D, ids(1, 2));
    m.clearedRank(D);
    m.clearedWorker(D.workerId());
    assertEquals(new KvcAccount(0, 0), m.account(D));
    m.claim(D, "s", ids(100, 1), 16);
    m.stored(D, false, 0, ids(1, 1), ids(100, 1));
    m.removed(D, ids(50, 1));
    assertEquals(16, m.residentTokens(D, "s"), "an unknown block's removal is skipped");
  }

  @Test
  void aRemovedWorkerLosesItsReportedBlocksAndClaimsToo() {
    ResidentModel m = new ResidentModel();
    m.claim(D, "s", ids(100, 2), 16);
    m.stored(D, false, 0, ids(1, 2), ids(100, 2));
    m.claim(E, "s", ids(100, 2), 16);
    m.stored(E, false, 0, ids(1, 2), ids(100, 2));
    m.removeWorker(D);
    assertEquals(0, m.used(D));
    m.blockTokens(D, 16);
    m.stored(D, false, 0, ids(1, 2), ids(100, 2));
    assertEquals(0, m.residentTokens(D, "s"), "the claim went with the worker");
    assertEquals(2 * 16, m.used(D));
    assertEquals(2 * 16, m.residentTokens(E, "s"), "the other worker is untouched");
  }

  @Test
  void aSessionsLastBlockRemovedLeavesItNothingAndItsOthersStay() {
    ResidentModel m = new ResidentModel();
    m.claim(D, "s", ids(100, 1), 16);
    m.claim(D, "t", ids(200, 2), 16);
    m.stored(D, false, 0, ids(1, 1), ids(100, 1));
    m.stored(D, false, 0, ids(11, 2), ids(200, 2));
    m.removed(D, ids(1, 1));
    assertEquals(0, m.residentTokens(D, "s"));
    m.removed(D, ids(11, 1));
    assertEquals(16, m.residentTokens(D, "t"), "one of t's two blocks left");
    assertEquals(16, m.used(D));
  }
}
