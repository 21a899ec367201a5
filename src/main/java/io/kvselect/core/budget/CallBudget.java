package io.kvselect.core.budget;

import io.kvselect.core.error.SelectionException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The latency budget of calls to shared cluster state: a request waits for a call at most
 * {@code budget}, then takes a local fallback. A breaker per owner member keeps a paused or
 * cut-off member from costing every request a budget: the first call to time out on one of its
 * keys <em>trips</em> it, and from then on calls on its keys take their fallback at once (the call
 * itself is still made: its late answer is what closes the breaker again, as does any call on its
 * keys completing). A member removed from the cluster no longer owns keys, so its breaker stops
 * mattering without being closed.
 *
 * <p>A failure of the call that is a request error ({@link SelectionException}) is passed on; any
 * other failure (the member left, the operation timed out inside the cluster library) takes the
 * fallback like a timeout.
 *
 * <p>Thread ownership: safe from any thread; {@code tripped} is a concurrent map written by the
 * completions of calls. Fallbacks run on {@code completions} (the node's event loops) after the
 * JDK's delay scheduler fires.
 */
public final class CallBudget {

  private final long budgetNanos;
  private final Executor completions;
  private final Function<Object, Object> ownerOf;
  private final Map<Object, Boolean> tripped = new ConcurrentHashMap<>();
  private final LongAdder trips = new LongAdder();

  /**
   * @param budget how long a request waits; positive
   * @param completions where fallbacks complete
   * @param ownerOf the member owning a key of the shared state, or null when unknown
   */
  public CallBudget(Duration budget, Executor completions, Function<Object, Object> ownerOf) {
    if (budget == null || budget.isNegative() || budget.isZero()) {
      throw new IllegalArgumentException("budget must be positive: " + budget);
    }
    this.budgetNanos = budget.toNanos();
    this.completions = Objects.requireNonNull(completions, "completions");
    this.ownerOf = Objects.requireNonNull(ownerOf, "ownerOf");
  }

  /** The budget in milliseconds. */
  public long budgetMillis() {
    return TimeUnit.NANOSECONDS.toMillis(budgetNanos);
  }

  /** How many times a breaker tripped. */
  public long trips() {
    return trips.sum();
  }

  /** Members whose breaker is tripped now. */
  public int tripped() {
    return tripped.size();
  }

  /** Whether calls on {@code key} take their fallback without waiting. */
  public boolean isTripped(Object key) {
    Object owner = ownerOf.apply(key);
    return owner != null && tripped.containsKey(owner);
  }

  /**
   * {@code call}'s outcome if it completes within the budget (at once while the key's owner is
   * tripped); else {@code fallback}'s, and {@code counted} is incremented. A fallback that throws
   * fails the answer.
   */
  public <T> CompletionStage<T> within(Object key, CompletionStage<T> call, Supplier<T> fallback, LongAdder counted) {
    Object owner = ownerOf.apply(key);
    CompletableFuture<T> out = new CompletableFuture<>();
    Runnable fall = () -> {
      if (!out.isDone()) {
        // counted before the answer is visible (a caller that reads the count after the answer
        // sees it), taken back when the call won the race
        counted.increment();
        try {
          if (!out.complete(fallback.get())) {
            counted.decrement();
          }
        } catch (RuntimeException e) {
          if (!out.completeExceptionally(e)) {
            counted.decrement();
          }
        }
      }
    };
    call.whenComplete((v, err) -> {
      if (err == null) {
        if (owner != null) {
          tripped.remove(owner);
        }
        out.complete(v);
      } else if (isRequestError(err)) {
        out.completeExceptionally(err);
      } else {
        completions.execute(fall);
      }
    });
    if (out.isDone()) {
      return out;
    }
    if (owner != null && tripped.containsKey(owner)) {
      fall.run();
      return out;
    }
    CompletableFuture.delayedExecutor(budgetNanos, TimeUnit.NANOSECONDS, completions).execute(() -> {
      if (!out.isDone() && owner != null && tripped.putIfAbsent(owner, Boolean.TRUE) == null) {
        trips.increment();
      }
      fall.run();
    });
    return out;
  }

  /** Whether {@code err} is the request's own fault (passed on) rather than the cluster's. */
  public static boolean isRequestError(Throwable err) {
    return SelectionException.unwrap(err) instanceof SelectionException;
  }
}
