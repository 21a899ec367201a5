package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kvselect.core.budget.CallBudget;
import io.kvselect.core.index.WorkerRank;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link BudgetedKvcState} over a real {@link LocalKvcState} behind a gate that can hold every
 * call (the owning member paused): answers within the budget, the near cache and local cursor past
 * it, and the held writes landing once the member answers.
 */
class BudgetedKvcStateTest {

  /** {@link KvcStateContract} through the budget and near cache, over a local state that always answers in time. */
  @Nested
  class OverALocalState extends KvcStateContract {
    private final KvcState state =
        new BudgetedKvcState(
            new LocalKvcState(),
            new CallBudget(Duration.ofSeconds(5), Runnable::run, k -> "member"),
            1000);

    @Override
    protected KvcState state(int handle) {
      return state;
    }
  }

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);

  private final LocalKvcState table = new LocalKvcState();
  private final Gate gate = new Gate(table);
  // no quiet period: these tests are about the KVC state, not about when the breaker closes
  private final CallBudget budget =
      new CallBudget(
          Duration.ofMillis(30),
          Duration.ZERO,
          Runnable::run,
          CallBudget.Routes.byOwner(k -> "the-owner"));
  private final BudgetedKvcState state = new BudgetedKvcState(gate, budget, 100);

  /** Passes calls to the state, or holds them until {@link #open}. */
  static final class Gate implements KvcState {
    private final KvcState inner;
    volatile boolean holding;
    private final List<Runnable> held = new ArrayList<>();

    Gate(KvcState inner) {
      this.inner = inner;
    }

    private synchronized <T> CompletionStage<T> gate(Supplier<CompletionStage<T>> call) {
      if (!holding) {
        return call.get();
      }
      CompletableFuture<T> later = new CompletableFuture<>();
      held.add(
          () ->
              call.get()
                  .whenComplete(
                      (v, e) -> {
                        if (e == null) {
                          later.complete(v);
                        } else {
                          later.completeExceptionally(e);
                        }
                      }));
      return later;
    }

    synchronized void open() {
      holding = false;
      held.forEach(Runnable::run);
      held.clear();
    }

    @Override
    public CompletionStage<KvcSnapshot> snapshot(String p, String s) {
      return gate(() -> inner.snapshot(p, s));
    }

    @Override
    public CompletionStage<Void> rejected(String p, String s, WorkerRank d) {
      return gate(() -> inner.rejected(p, s, d));
    }

    @Override
    public CompletionStage<WorkerRank> admitted(
        String p, String s, WorkerRank d, ResetScope scope) {
      return gate(() -> inner.admitted(p, s, d, scope));
    }

    @Override
    public CompletionStage<Void> fallback(String p, String s, WorkerRank d) {
      return gate(() -> inner.fallback(p, s, d));
    }

    @Override
    public CompletionStage<Void> finished(String p, WorkerRank d) {
      return gate(() -> inner.finished(p, d));
    }

    @Override
    public CompletionStage<Long> nextRoundRobin(String p, String pool) {
      return gate(() -> inner.nextRoundRobin(p, pool));
    }

    @Override
    public CompletionStage<Long> peekRoundRobin(String p, String pool) {
      return gate(() -> inner.peekRoundRobin(p, pool));
    }

    @Override
    public CompletionStage<Void> removeWorker(long id) {
      return gate(() -> inner.removeWorker(id));
    }

    @Override
    public int sessions() {
      return inner.sessions();
    }
  }

  private static <T> T get(CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void aHealthyStateAnswersAndFeedsTheNearCache() throws Exception {
    assertNull(get(state.admitted("p", "s1", A, ResetScope.WINNER)));
    assertEquals(A, get(state.snapshot("p", "s1")).pin());
    assertEquals(0, state.fallbacks());
    assertEquals(1, state.nearCacheSize());
  }

  @Test
  void aSilentOwnerCostsOneBudgetAndTheNodeDecidesFromWhatItSaw() throws Exception {
    get(state.admitted("p", "s1", A, ResetScope.WINNER));
    get(state.snapshot("p", "s1"));
    gate.holding = true;

    long t0 = System.nanoTime();
    KvcSnapshot seen = get(state.snapshot("p", "s1"));
    assertEquals(A, seen.pin(), "the near cache's pin");
    assertEquals(
        null, get(state.snapshot("p", "unseen")).pin(), "an unseen session: the first-turn path");
    assertEquals(
        A, get(state.admitted("p", "s1", B, ResetScope.WINNER)), "the pin the node last saw");
    assertNull(get(state.finished("p", A)));
    long first = get(state.nextRoundRobin("p", "pool"));
    assertEquals(first + 1, get(state.nextRoundRobin("p", "pool")), "a local cursor still spreads");
    assertEquals(6, state.fallbacks());
    assertEquals(1, budget.tripped(), "the owner is not waited for after its first timeout");

    gate.open();
    assertEquals(
        B,
        get(table.snapshot("p", "s1")).pin(),
        "the held admission landed once the owner answered");
    assertEquals(B, get(state.snapshot("p", "s1")).pin());
    assertEquals(0, budget.tripped());
    System.out.printf(
        "six calls on a silent owner answered in %.0f ms%n", (System.nanoTime() - t0) / 1e6);
  }
}
