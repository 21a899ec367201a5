package io.kvselect.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.budget.CallBudget;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * {@link BudgetedSessionAffinity} over a real {@link LocalSessionAffinity} behind a gate that can
 * hold every call (the shared table's owner paused) or fail it (the owner left): answers within the
 * budget, local decisions past it, and the write-back rule (the table's binding wins).
 */
class BudgetedSessionAffinityTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);

  private final MutableClock clock = new MutableClock();
  private final LocalSessionAffinity table =
      new LocalSessionAffinity(clock, Duration.ofSeconds(60));
  private final Gate gate = new Gate(table);
  // no quiet period (the breaker closes at the first answer within the budget): when it closes
  // is CallBudgetTest's subject; these tests are about the near cache and the write-backs
  private final CallBudget budget =
      new CallBudget(
          Duration.ofMillis(30),
          Duration.ZERO,
          Runnable::run,
          CallBudget.Routes.byOwner(
              k -> "owner-of-" + ((String) k).charAt(((String) k).length() - 1)));
  private final BudgetedSessionAffinity sessions =
      new BudgetedSessionAffinity(gate, budget, clock, Duration.ofSeconds(60), 1000);

  /** Passes calls to the table, or holds them until {@link #open}, or fails them. */
  static final class Gate implements SessionAffinity {
    enum Mode {
      PASS,
      HOLD,
      FAIL
    }

    private final SessionAffinity inner;
    volatile Mode mode = Mode.PASS;
    private final List<Runnable> held = new ArrayList<>();

    Gate(SessionAffinity inner) {
      this.inner = inner;
    }

    private synchronized <T> CompletionStage<T> gate(Supplier<CompletionStage<T>> call) {
      if (mode == Mode.FAIL) {
        return CompletableFuture.failedFuture(new IllegalStateException("owner left"));
      }
      if (mode == Mode.PASS) {
        return call.get();
      }
      CompletableFuture<T> later = new CompletableFuture<>();
      held.add(
          () ->
              call.get()
                  .whenComplete(
                      (v, e) -> {
                        if (e != null) {
                          later.completeExceptionally(e);
                        } else {
                          later.complete(v);
                        }
                      }));
      return later;
    }

    synchronized int heldCalls() {
      return held.size();
    }

    synchronized void open() {
      mode = Mode.PASS;
      held.forEach(Runnable::run);
      held.clear();
    }

    @Override
    public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
      return gate(() -> inner.lookup(partition, sessionId));
    }

    @Override
    public CompletionStage<WorkerRank> bindAndLease(
        String partition,
        String sessionId,
        WorkerRank expected,
        WorkerRank target,
        String leaseId) {
      return gate(() -> inner.bindAndLease(partition, sessionId, expected, target, leaseId));
    }

    @Override
    public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
      return gate(() -> inner.releaseLease(partition, sessionId, leaseId));
    }

    @Override
    public CompletionStage<Integer> sweep() {
      return gate(inner::sweep);
    }

    @Override
    public CompletionStage<Void> removeWorker(long workerId) {
      return gate(() -> inner.removeWorker(workerId));
    }

    @Override
    public int size() {
      return inner.size();
    }
  }

  private static <T> T get(CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void withinTheBudgetTheTableAnswers() throws Exception {
    assertEquals(A, get(sessions.bindAndLease("p", "s1", null, A, "r1")));
    assertEquals(
        A,
        get(sessions.bindAndLease("p", "s1", null, B, "r2")),
        "the table's compare-and-bind decides");
    assertEquals(Optional.of(A), get(sessions.lookup("p", "s1")));
    assertEquals(new BudgetedSessionAffinity.Stats(0, 0, 0, 0, 0, 0, 1, 0), sessions.stats());
  }

  @Test
  void aHeldTableAnswersFromTheNearCacheAfterTheBudget() throws Exception {
    get(sessions.bindAndLease("p", "seen", null, A, "r1"));
    gate.mode = Gate.Mode.HOLD;
    assertEquals(
        Optional.of(A),
        get(sessions.lookup("p", "seen")),
        "a session this node saw keeps its worker");
    assertEquals(
        Optional.empty(),
        get(sessions.lookup("p", "unseen")),
        "an unseen one falls to the KV choice");
    assertEquals(2, sessions.stats().lookupFallbacks());
  }

  @Test
  void aHeldBindBooksLocallyAndTheTableDecidesWhenItAnswers() throws Exception {
    get(table.bindAndLease("p", "s", null, B, "other-node"));
    gate.mode = Gate.Mode.HOLD;
    assertEquals(
        A,
        get(sessions.bindAndLease("p", "s", null, A, "r1")),
        "past the budget the local target is booked");
    assertEquals(1, sessions.stats().bindFallbacks());
    assertEquals(1, sessions.stats().unconfirmed());
    gate.open();
    BudgetedSessionAffinity.Stats st = sessions.stats();
    assertEquals(0, st.unconfirmed());
    assertEquals(1, st.writeBackConflicts(), "the table already held B");
    assertEquals(
        Optional.of(B), get(sessions.lookup("p", "s")), "the table's binding wins once it answers");
    assertEquals(Optional.of(B), get(table.lookup("p", "s")), "the fallback never replaced it");
  }

  @Test
  void aFailedBindIsWrittenBackOnTheNextSweepWithoutReplacingATableBinding() throws Exception {
    gate.mode = Gate.Mode.FAIL;
    assertEquals(A, get(sessions.bindAndLease("p", "new", null, A, "r1")));
    assertEquals(A, get(sessions.bindAndLease("p", "taken", null, A, "r2")));
    assertEquals(2, sessions.stats().unconfirmed());
    gate.mode = Gate.Mode.PASS;
    get(table.bindAndLease("p", "taken", null, B, "elsewhere"));
    get(sessions.sweep());
    assertEquals(
        Optional.of(A), get(table.lookup("p", "new")), "an unbound session gets the local binding");
    assertEquals(Optional.of(B), get(table.lookup("p", "taken")), "a bound one keeps the table's");
    assertEquals(0, sessions.stats().unconfirmed());
    assertEquals(2, sessions.stats().writeBacks());
    assertEquals(1, sessions.stats().writeBackConflicts());
  }

  @Test
  void aLeaseReleasedBeforeTheWriteBackLeavesTheBindingToExpire() throws Exception {
    gate.mode = Gate.Mode.FAIL;
    get(sessions.bindAndLease("p", "s", null, A, "r1"));
    get(sessions.releaseLease("p", "s", "r1"));
    gate.mode = Gate.Mode.PASS;
    get(sessions.sweep());
    assertEquals(Optional.of(A), get(table.lookup("p", "s")));
    clock.advance(Duration.ofSeconds(61));
    assertEquals(
        Optional.empty(), get(table.lookup("p", "s")), "no lease left behind: the idle TTL ran");
  }

  @Test
  void anOwnerThatTimedOutIsNotWaitedForAgainWhileItsBreakerIsOpen() throws Exception {
    gate.mode = Gate.Mode.HOLD;
    get(sessions.lookup("p", "s1"));
    for (int i = 0; i < 100; i++) {
      // same owner (same last character): answered from the near cache without asking the table
      get(sessions.lookup("p", "x1"));
    }
    assertEquals(
        101, gate.heldCalls(), "every call is still made (the first answer closes the breaker)");
    assertEquals(
        101,
        sessions.stats().lookupFallbacks(),
        "only the first waited the budget; the rest did not");
    assertEquals(1, budget.trips());
    assertEquals(1, budget.tripped());
    gate.open();
    assertEquals(0, budget.tripped(), "the owner answered: calls wait for it again");
    assertEquals(Optional.empty(), get(sessions.lookup("p", "s2")));
    assertEquals(101, sessions.stats().lookupFallbacks());
  }

  @Test
  void requestErrorsAreNotFallbacks() {
    gate.mode = Gate.Mode.HOLD;
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> get(sessions.lookup("p", "")));
    assertTrue(e.getCause() instanceof SelectionException);
    assertEquals(0, sessions.stats().lookupFallbacks());
  }

  /** The table of a member that lost a binding: a split side that held neither its partition nor the backup. */
  static Gate swappable(java.util.concurrent.atomic.AtomicReference<SessionAffinity> now) {
    return new Gate(
        new SessionAffinity() {
          @Override
          public CompletionStage<Optional<WorkerRank>> lookup(String p, String s) {
            return now.get().lookup(p, s);
          }

          @Override
          public CompletionStage<WorkerRank> bindAndLease(
              String p, String s, WorkerRank e, WorkerRank t, String l) {
            return now.get().bindAndLease(p, s, e, t, l);
          }

          @Override
          public CompletionStage<Void> releaseLease(String p, String s, String l) {
            return now.get().releaseLease(p, s, l);
          }

          @Override
          public CompletionStage<Integer> sweep() {
            return now.get().sweep();
          }

          @Override
          public CompletionStage<Void> removeWorker(long w) {
            return now.get().removeWorker(w);
          }

          @Override
          public int size() {
            return now.get().size();
          }
        });
  }

  @Test
  void aBindingTheTableLostIsAnsweredFromTheNearCacheAndWrittenBackOnlyWhereTheTableHasNone()
      throws Exception {
    var now = new java.util.concurrent.atomic.AtomicReference<SessionAffinity>(table);
    BudgetedSessionAffinity s =
        new BudgetedSessionAffinity(swappable(now), budget, clock, Duration.ofSeconds(60), 1000);
    assertEquals(A, get(s.bindAndLease("p", "kept", null, A, "r1")));
    assertEquals(A, get(s.bindAndLease("p", "raced", null, A, "r2")));
    LocalSessionAffinity lost = new LocalSessionAffinity(clock, Duration.ofSeconds(60));
    now.set(lost);

    assertEquals(
        Optional.of(A),
        get(s.lookup("p", "kept")),
        "the binding this node saw, not a new placement");
    assertEquals(Optional.of(A), get(s.lookup("p", "raced")));
    assertEquals(2, s.stats().restoredLookups());
    assertEquals(
        A, get(s.bindAndLease("p", "kept", A, A, "r3")), "written where the table holds none");
    assertEquals(Optional.of(A), get(lost.lookup("p", "kept")));

    get(lost.bindAndLease("p", "raced", null, B, "another-node"));
    assertEquals(B, get(s.bindAndLease("p", "raced", A, A, "r4")), "a binding made meanwhile wins");
    assertEquals(Optional.of(B), get(s.lookup("p", "raced")));
  }

  @Test
  void aRemovedWorkerLeavesTheNearCache() throws Exception {
    get(sessions.bindAndLease("p", "s", null, A, "r1"));
    get(sessions.removeWorker(A.workerId()));
    gate.mode = Gate.Mode.HOLD;
    assertEquals(Optional.empty(), get(sessions.lookup("p", "s")));
  }
}
