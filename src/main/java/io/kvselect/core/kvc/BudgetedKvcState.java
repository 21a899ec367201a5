package io.kvselect.core.kvc;

import io.kvselect.core.budget.CallBudget;
import io.kvselect.core.index.WorkerRank;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A cluster-wide {@link KvcState} whose every call is bounded by the node's {@link CallBudget}:
 * when the member owning the key has not answered within the budget the KVC-Router decides
 * without waiting, and the call goes on in the background, landing when the member answers.
 * <ul>
 *   <li>{@code snapshot}: the last snapshot this node read for the session (a near cache of
 *       {@code nearCacheEntries}), else an empty one (no pin, no counters: Route's first-turn path);
 *   <li>{@code admitted}: the pin the near cache last saw (null without one), so a migration this
 *       node cannot confirm is not reported;
 *   <li>{@code rejected}, {@code fallback}, {@code finished}, {@code removeWorker}: answered at once;
 *   <li>{@code nextRoundRobin}: a node-local cursor, so Fallback still spreads its requests;
 *       {@code peekRoundRobin}: that cursor's next value, unmoved.
 * </ul>
 * Every fallback is counted ({@link #fallbacks}). Keys: the session's key
 * ({@link #key(String, String)}) for session calls, the partition for the worker counters, so
 * the breaker of a silent member covers exactly the keys it owns.
 *
 * <p>Owner of the near cache and the local cursor (synchronized / atomic, short); the state
 * itself is owned by the delegate. Safe from any thread, never blocks.
 */
public final class BudgetedKvcState implements KvcState {

  private final KvcState delegate;
  private final CallBudget budget;
  private final int nearCacheEntries;
  private final LongAdder fallbacks = new LongAdder();
  private final AtomicLong localCursor = new AtomicLong();
  private final LinkedHashMap<String, KvcSnapshot> near;

  public BudgetedKvcState(KvcState delegate, CallBudget budget, int nearCacheEntries) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.budget = Objects.requireNonNull(budget, "budget");
    if (nearCacheEntries < 1) {
      throw new IllegalArgumentException("nearCacheEntries must be positive");
    }
    this.nearCacheEntries = nearCacheEntries;
    this.near =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, KvcSnapshot> e) {
            return size() > BudgetedKvcState.this.nearCacheEntries;
          }
        };
  }

  /** The key of a session's KVC state: the partition's length first, so no pair collides with another. */
  public static String key(String partition, String sessionId) {
    return partition.length() + ":" + partition + sessionId;
  }

  /** Calls that took their fallback. */
  public long fallbacks() {
    return fallbacks.sum();
  }

  /** Sessions in the near cache. */
  public synchronized int nearCacheSize() {
    return near.size();
  }

  public CallBudget budget() {
    return budget;
  }

  @Override
  public CompletionStage<KvcSnapshot> snapshot(String partition, String sessionId) {
    String k = key(partition, sessionId);
    CompletionStage<KvcSnapshot> call =
        delegate
            .snapshot(partition, sessionId)
            .thenApply(
                s -> {
                  remember(k, s);
                  return s;
                });
    return budget.read(k, call, () -> cached(k), fallbacks);
  }

  @Override
  public CompletionStage<Void> rejected(String partition, String sessionId, WorkerRank d) {
    String k = key(partition, sessionId);
    return budget.write(k, delegate.rejected(partition, sessionId, d), () -> null, fallbacks);
  }

  @Override
  public CompletionStage<WorkerRank> admitted(
      String partition, String sessionId, WorkerRank d, ResetScope scope) {
    String k = key(partition, sessionId);
    KvcSnapshot before = cached(k);
    CompletionStage<WorkerRank> call = delegate.admitted(partition, sessionId, d, scope);
    remember(
        k, new KvcSnapshot(d, Map.of(), before.inflight(), before.assigned(), before.turns() + 1));
    return budget.write(k, call, before::pin, fallbacks);
  }

  @Override
  public CompletionStage<Void> fallback(String partition, String sessionId, WorkerRank d) {
    String k = key(partition, sessionId);
    return budget.write(k, delegate.fallback(partition, sessionId, d), () -> null, fallbacks);
  }

  @Override
  public CompletionStage<Void> finished(String partition, WorkerRank d) {
    return budget.write(partition, delegate.finished(partition, d), () -> null, fallbacks);
  }

  @Override
  public CompletionStage<Long> nextRoundRobin(String partition, String pool) {
    return budget.write(
        partition,
        delegate.nextRoundRobin(partition, pool),
        localCursor::getAndIncrement,
        fallbacks);
  }

  @Override
  public CompletionStage<Long> peekRoundRobin(String partition, String pool) {
    return budget.read(
        partition, delegate.peekRoundRobin(partition, pool), localCursor::get, fallbacks);
  }

  @Override
  public CompletionStage<Void> removeWorker(long workerId) {
    return budget.write("kvc-workers", delegate.removeWorker(workerId), () -> null, fallbacks);
  }

  @Override
  public int sessions() {
    return delegate.sessions();
  }

  private synchronized void remember(String k, KvcSnapshot s) {
    near.put(k, s);
  }

  private synchronized KvcSnapshot cached(String k) {
    KvcSnapshot s = near.get(k);
    return s == null ? KvcSnapshot.EMPTY : s;
  }
}
