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
    assertEquals(0, m.residentTokens(D, "t"), "a negative put forgets too, it never stores a negative");
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
    assertEquals(AdmitDecision.reject(AdmitDecision.NOT_RESIDENT_NO_CAPACITY),
        a.admit(D, r).toCompletableFuture().join(), "50 + 60 > 0.95 * 100");
    assertEquals(AdmitDecision.admit(KvcMode.SEED), a.admit(E, r).toCompletableFuture().join());
  }

  /** The capacity test is inclusive: exactly rho * K_d admits, one token more does not. */
  @Test
  void theHighWaterMarkIsInclusiveForResidentAndNewSessions() {
    ResidentModel m = new ResidentModel();
    KvcParams net = KvcParams.defaults().withAccounting(AdmitAccounting.NET).withRho(0.5);
    m.put(D, "s", 10);
    m.put(D, "other", 40);
    assertEquals(KvcMode.DIRECT, m.decide(D, new KvcRequest("s", 2, 10, 0), 100, net).mode(), "40 + 10 = 50");
    assertEquals(AdmitDecision.NO_CAPACITY, m.decide(D, new KvcRequest("s", 2, 11, 0), 100, net).reason());
    assertEquals(KvcMode.RESEED, m.decide(D, new KvcRequest("new", 2, 0, 0), 100, net.withRho(0.5)).mode(),
        "50 + 0 = 50");
    assertEquals(AdmitDecision.NOT_RESIDENT_NO_CAPACITY,
        m.decide(D, new KvcRequest("new", 2, 1, 1), 100, net).reason());
  }

  /** Under the refinement a resident session's only limit is the worker itself: input at K_d admits. */
  @Test
  void theRefinementAdmitsAResidentSessionUpToTheWholeWorker() {
    ResidentModel m = new ResidentModel();
    KvcParams refined = KvcParams.defaults().withCountWaiting(true).withTauAppend(1000);
    m.put(D, "s", 500);
    m.addWaiting(D, 5_000);
    assertEquals(KvcMode.DIRECT, m.decide(D, new KvcRequest("s", 3, 1000, 1000), 1000, refined).mode());
    assertEquals(AdmitDecision.NO_CAPACITY, m.decide(D, new KvcRequest("s", 3, 1001, 1000), 1000, refined).reason());
    assertEquals(AdmitDecision.LARGE_APPEND, m.decide(D, new KvcRequest("s", 3, 1001, 1001), 5000, refined).reason(),
        "the append limit still comes first");
  }
}
