package io.kvselect.core.pending;

import io.kvselect.core.budget.CallBudget;
import io.kvselect.core.error.SelectionException;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;

/**
 * A latency budget ({@link CallBudget}) around a shared {@link PendingStore}: no request waits for
 * the store longer than the budget. Past it:
 *
 * <ul>
 *   <li>{@link #put} answers generation {@code -1} and the write goes on (a replay that reaches
 *       the store before the write lands answers 404, as for an expired selection);
 *   <li>{@link #peek} fails with 503 NOT_READY naming the store: the entry exists only there, so a
 *       replay cannot be decided locally; the client retries, or selects again;
 *   <li>{@link #remove} and {@link #removeIfGeneration} answer at once ({@code true}) and the
 *       removal goes on; until it lands, a second replay of the same id on another node may still
 *       find the entry (the one case in which a fault can let a cached selection be booked twice).
 * </ul>
 *
 * <p>Thread ownership: stateless but for its counters (concurrent adders).
 */
public final class BudgetedPendingStore<K, V> implements PendingStore<K, V> {

  private final PendingStore<K, V> shared;
  private final CallBudget budget;
  private final LongAdder fallbacks = new LongAdder();

  public BudgetedPendingStore(PendingStore<K, V> shared, CallBudget budget) {
    this.shared = Objects.requireNonNull(shared, "shared");
    this.budget = Objects.requireNonNull(budget, "budget");
  }

  @Override
  public CompletionStage<Long> put(K key, V value, long bytes) {
    return budget.write(key, shared.put(key, value, bytes), () -> -1L, fallbacks);
  }

  @Override
  public CompletionStage<PendingEntry<V>> peek(K key) {
    return budget.read(
        key,
        shared.peek(key),
        () -> {
          throw SelectionException.notReady(
              "the pending-selection store did not answer within "
                  + budget.budgetMillis()
                  + " ms (a cluster member is unreachable); retry, or select again");
        },
        fallbacks);
  }

  @Override
  public CompletionStage<Boolean> removeIfGeneration(K key, long generation) {
    return budget.write(key, shared.removeIfGeneration(key, generation), () -> true, fallbacks);
  }

  @Override
  public CompletionStage<Void> remove(K key) {
    return budget.write(key, shared.remove(key), () -> null, fallbacks);
  }

  @Override
  public int size() {
    return shared.size();
  }

  /** Calls that took their fallback. */
  public long fallbacks() {
    return fallbacks.sum();
  }
}
