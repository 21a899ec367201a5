package io.kvselect.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.budget.CallBudget;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.session.BudgetedSessionAffinityTest.Gate;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The edges of {@link BudgetedSessionAffinity}'s rules, over a real {@link LocalSessionAffinity}
 * behind {@link Gate}: the near cache's capacity and idle TTL, what a lookup and a fallback leave
 * in it, the arguments refused before any call, which lease a write-back holds, and what a
 * removed worker takes with it. {@link BudgetedSessionAffinityTest} covers the main paths.
 */
class BudgetedSessionAffinityRulesTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);
  private static final WorkerRank C = new WorkerRank(3, 0);
  private static final Duration TTL = Duration.ofSeconds(60);

  private final MutableClock clock = new MutableClock();
  private final LocalSessionAffinity table = new LocalSessionAffinity(clock, TTL);
  private final Gate gate = new Gate(table);
  private final CallBudget budget =
      new CallBudget(
          Duration.ofMillis(30), Duration.ZERO, Runnable::run, CallBudget.Routes.byOwner(k -> "o"));

  private BudgetedSessionAffinity sessions(SessionAffinity shared, int nearCapacity) {
    return new BudgetedSessionAffinity(shared, budget, clock, TTL, nearCapacity);
  }

  private static <T> T get(CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void theNearCacheMustHoldAtLeastOneEntry() {
    assertThrows(IllegalArgumentException.class, () -> sessions(gate, 0));
    assertEquals(0, sessions(gate, 1).stats().nearCacheSize());
  }

  @Test
  void theNearCacheKeepsItsCapacityDroppingTheLeastRecentlyUsed() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 2);
    get(s.bindAndLease("p", "s1", null, A, "r1"));
    get(s.bindAndLease("p", "s2", null, B, "r2"));
    assertEquals(2, s.stats().nearCacheSize(), "exactly the capacity: both kept");
    get(s.bindAndLease("p", "s3", null, C, "r3"));
    assertEquals(2, s.stats().nearCacheSize());
    gate.mode = Gate.Mode.HOLD;
    assertEquals(Optional.empty(), get(s.lookup("p", "s1")), "the eldest went");
    assertEquals(Optional.of(B), get(s.lookup("p", "s2")));
    assertEquals(Optional.of(C), get(s.lookup("p", "s3")));
  }

  @Test
  void aNearCacheEntryAnswersUntilTheIdleTtlAndNotAMillisecondLonger() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    get(s.bindAndLease("p", "s", null, A, "r1"));
    gate.mode = Gate.Mode.HOLD;
    clock.advance(TTL);
    assertEquals(Optional.of(A), get(s.lookup("p", "s")), "seen exactly one TTL ago");
    clock.advance(Duration.ofMillis(1));
    assertEquals(Optional.empty(), get(s.lookup("p", "s")), "older than the TTL");
    assertEquals(0, s.stats().nearCacheSize(), "and dropped from the near cache");
  }

  @Test
  void aLookupTheTableAnswersIsRememberedAndAnUnboundOneCostsNoFallback() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    get(table.bindAndLease("p", "elsewhere", null, B, "other-node"));
    assertEquals(Optional.of(B), get(s.lookup("p", "elsewhere")));
    assertEquals(Optional.empty(), get(s.lookup("p", "unbound")));
    assertEquals(0, s.stats().lookupFallbacks(), "both answered by the table");
    assertEquals(0, s.stats().restoredLookups());
    gate.mode = Gate.Mode.HOLD;
    assertEquals(
        Optional.of(B), get(s.lookup("p", "elsewhere")), "the table's answer is in the near cache");
  }

  @Test
  void aBindPastTheBudgetIsRememberedAndItsTableAnswerCountsAsAWriteBack() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    gate.mode = Gate.Mode.HOLD;
    assertEquals(A, get(s.bindAndLease("p", "s", null, A, "r1")));
    assertEquals(Optional.of(A), get(s.lookup("p", "s")), "the local decision answers lookups");
    gate.open();
    assertEquals(1, s.stats().writeBacks());
    assertEquals(0, s.stats().writeBackConflicts());
    assertEquals(0, s.stats().unconfirmed());
  }

  @Test
  void invalidArgumentsFailTheCallBeforeTheTableIsAsked() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    gate.mode = Gate.Mode.HOLD;
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> get(s.bindAndLease("p", "", null, A, "r1")));
    assertTrue(e.getCause() instanceof SelectionException, e.getCause().toString());
    assertThrows(ExecutionException.class, () -> get(s.bindAndLease(null, "s", null, A, "r1")));
    assertThrows(ExecutionException.class, () -> get(s.bindAndLease("p", "s", null, null, "r1")));
    assertThrows(ExecutionException.class, () -> get(s.bindAndLease("p", "s", null, A, null)));

    get(s.releaseLease(null, "s", "r1"));
    get(s.releaseLease("p", null, "r1"));
    get(s.releaseLease("p", "", "r1"));
    get(s.releaseLease("p", "s", null));
    assertEquals(0, gate.heldCalls(), "nothing reached the table");
    assertEquals(new BudgetedSessionAffinity.Stats(0, 0, 0, 0, 0, 0, 0, 0), s.stats());
  }

  @Test
  void releasingAnotherLeaseLeavesAnUnconfirmedBindingItsOwn() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    gate.mode = Gate.Mode.FAIL;
    get(s.bindAndLease("p", "s", null, A, "r1"));
    get(s.releaseLease("p", "s", "someone-else"));
    get(s.releaseLease("p", "gone", "r1"));
    gate.mode = Gate.Mode.PASS;
    get(s.sweep());
    clock.advance(TTL.plusSeconds(1));
    assertEquals(
        Optional.of(A),
        get(table.lookup("p", "s")),
        "written back with lease r1, which is still held: no idle TTL runs");
  }

  @Test
  void aLeaseReleasedTwiceBeforeTheWriteBackIsReleasedOnce() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    gate.mode = Gate.Mode.FAIL;
    get(s.bindAndLease("p", "s", null, A, "r1"));
    get(s.releaseLease("p", "s", "r1"));
    get(s.releaseLease("p", "s", "r1"));
    gate.mode = Gate.Mode.PASS;
    get(s.sweep());
    assertEquals(Optional.of(A), get(table.lookup("p", "s")));
    clock.advance(TTL.plusSeconds(1));
    assertEquals(Optional.empty(), get(table.lookup("p", "s")), "no lease left behind");
  }

  @Test
  void aReleaseTheTableFailedIsRetriedOnTheNextSweep() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    get(s.bindAndLease("p", "s", null, A, "r1"));
    gate.mode = Gate.Mode.FAIL;
    get(s.releaseLease("p", "s", "r1"));
    assertEquals(1, s.stats().releaseFallbacks());
    gate.mode = Gate.Mode.PASS;
    clock.advance(TTL.plusSeconds(1));
    assertEquals(Optional.of(A), get(table.lookup("p", "s")), "the table still holds lease r1");
    get(s.sweep());
    clock.advance(TTL.plusSeconds(1));
    assertEquals(
        Optional.empty(), get(table.lookup("p", "s")), "released by the sweep, then idle-expired");
  }

  @Test
  void aWriteBackOfALeasedBindingKeepsThatLeaseAndTheNearCacheTakesTheTablesAnswer()
      throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    gate.mode = Gate.Mode.FAIL;
    get(s.bindAndLease("p", "mine", null, A, "r1"));
    get(s.bindAndLease("p", "taken", null, A, "r2"));
    gate.mode = Gate.Mode.PASS;
    get(table.bindAndLease("p", "taken", null, B, "another-node"));
    get(s.sweep());
    gate.mode = Gate.Mode.HOLD;
    assertEquals(
        Optional.of(B),
        get(s.lookup("p", "taken")),
        "the table's binding, learnt by the write-back, answers the next fallback");
    clock.advance(TTL.plusSeconds(1));
    assertEquals(
        Optional.of(A), get(table.lookup("p", "mine")), "still leased by r1: the booking lives");
  }

  /** The table lost "s" (bound to A through this node); a lookup restored A from the near cache. */
  private BudgetedSessionAffinity restoredA(AtomicReference<SessionAffinity> now) throws Exception {
    BudgetedSessionAffinity s = sessions(BudgetedSessionAffinityTest.swappable(now), 10);
    assertEquals(A, get(s.bindAndLease("p", "s", null, A, "r1")));
    now.set(new LocalSessionAffinity(clock, TTL));
    assertEquals(Optional.of(A), get(s.lookup("p", "s")));
    assertEquals(1, s.stats().restoredLookups());
    return s;
  }

  @Test
  void aRestoredBindingThatTheTableRegainedMeanwhileIsNotMovedByThisNode() throws Exception {
    var now = new AtomicReference<SessionAffinity>(table);
    BudgetedSessionAffinity s = restoredA(now);
    get(now.get().bindAndLease("p", "s", null, A, "another-node")); // written back elsewhere
    assertEquals(
        A,
        get(s.bindAndLease("p", "s", A, B, "r2")),
        "A came from the near cache, not the table: the move to B binds only where none is");
  }

  @Test
  void aBindExpectingWhatTheTableHoldsIsNotTakenForARestoredOne() throws Exception {
    var now = new AtomicReference<SessionAffinity>(table);
    BudgetedSessionAffinity s = restoredA(now);
    get(now.get().bindAndLease("p", "s", null, C, "another-node"));
    assertEquals(
        B,
        get(s.bindAndLease("p", "s", C, B, "r2")),
        "the caller expected C, which the table holds: an ordinary compare-and-bind");
  }

  @Test
  void aRemovedWorkerTakesItsUnconfirmedAndRestoredBindingsWithIt() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    assertTrue(s.budget() == budget);
    gate.mode = Gate.Mode.FAIL;
    get(s.bindAndLease("p", "s", null, A, "r1"));
    get(s.bindAndLease("p", "other", null, B, "r2"));
    assertEquals(2, s.stats().unconfirmed());
    assertEquals(2, s.stats().nearCacheSize());
    s.removeWorker(A.workerId());
    assertEquals(1, s.stats().unconfirmed(), "B's binding is still to be written");
    assertEquals(1, s.stats().nearCacheSize(), "and still in the near cache");
    gate.mode = Gate.Mode.PASS;
    get(s.sweep());
    assertEquals(Optional.empty(), get(table.lookup("p", "s")), "nothing written back for A");
    assertEquals(Optional.of(B), get(table.lookup("p", "other")));

    var now = new AtomicReference<SessionAffinity>(table);
    BudgetedSessionAffinity r = restoredA(now);
    get(r.removeWorker(C.workerId()));
    get(now.get().bindAndLease("p", "s", null, A, "another-node"));
    assertEquals(
        A, get(r.bindAndLease("p", "s", A, B, "r2")), "removing C left the restored A in place");
    now.set(new LocalSessionAffinity(clock, TTL));
    assertEquals(Optional.of(A), get(r.lookup("p", "s")), "the table lost it again: restored");
    get(r.removeWorker(A.workerId()));
    get(now.get().bindAndLease("p", "s", null, A, "another-node"));
    assertEquals(
        B,
        get(r.bindAndLease("p", "s", A, B, "r2")),
        "no restored entry left: expecting A is an ordinary compare-and-bind");
  }

  @Test
  void sizeIsTheTablesOwn() throws Exception {
    BudgetedSessionAffinity s = sessions(gate, 10);
    get(table.bindAndLease("p", "a", null, A, "x"));
    get(table.bindAndLease("q", "b", null, B, "y"));
    assertEquals(2, s.size());
  }
}
