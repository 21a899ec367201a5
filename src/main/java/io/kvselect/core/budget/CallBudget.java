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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The latency budget of calls to shared cluster state: a request waits for a call at most
 * {@code budget}, then takes a local fallback. A breaker per <em>route</em> (the members a call
 * must hear from, {@link Routes}) keeps a paused or cut-off member from costing every request a
 * budget: the first call on a route to time out <em>trips</em> it, and from then on calls on that
 * route take their fallback at once. The call itself is still made, and every call still
 * unanswered when its budget runs out, or answered after it, is a new sign of slowness, tripped
 * or not. The breaker closes at the first answer within the budget (counted from when the call
 * was made) once the route has shown no sign of slowness for a quiet period (by default
 * {@link #MIN_QUIET}, or twice the budget if that is longer).
 *
 * <p>Why the quiet period: calls on one route are not all alike. While a backup member is
 * paused, a write that changes nothing sends no backup and answers at once, and so does a write
 * whose partition moved; with a breaker closed by any fast answer, each such answer let the next
 * write wait its whole budget again (chaos runs of 2026-12-04: 10-20 writes per second per node
 * paid the full 250 ms while a member was paused, and the fault window's p99 sat at the budget
 * plus a few milliseconds whatever the budget).
 *
 * <p>Reads and writes have different routes because they wait for different members: a read of a
 * key waits for its partition's owner only; a write also waits for the synchronous backups. With
 * one route per owner (as before 2026-12-02) a paused <em>backup</em> stalled every write whose
 * owner was healthy until the cluster library's backup timeout (5 s), and each late write, and
 * every fast read of the same owner, closed the breaker again, so calls kept paying the budget
 * while a member was paused (the fault window's p99 sat at the budget plus ~10 ms).
 *
 * <p>A route not tripped again nor slow for {@link #FORGET_AFTER} is forgotten (a member that left
 * the cluster owns no keys, so its routes are never used again).
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

  /** How long a tripped route with no new sign of slowness is kept. */
  public static final Duration FORGET_AFTER = Duration.ofSeconds(60);

  /** The shortest time a tripped route must show no sign of slowness before an answer closes it. */
  public static final Duration MIN_QUIET = Duration.ofSeconds(1);

  /**
   * The members a call on a key waits for, as any value with equality (null when unknown: such a
   * call waits its budget every time). Implementations read local tables only: no remote call.
   */
  public interface Routes {

    /** What a read of {@code key} waits for: its owner. */
    Object read(Object key);

    /** What a write of {@code key} waits for: its owner and its synchronous backups. */
    Object write(Object key);

    /** Reads and writes of a key wait for the same member, {@code ownerOf(key)}. */
    static Routes byOwner(Function<Object, Object> ownerOf) {
      Objects.requireNonNull(ownerOf, "ownerOf");
      return new Routes() {
        @Override
        public Object read(Object key) {
          return ownerOf.apply(key);
        }

        @Override
        public Object write(Object key) {
          return ownerOf.apply(key);
        }
      };
    }
  }

  private final long budgetNanos;
  private final long quietNanos;
  private final Executor completions;
  private final Routes routes;
  private final LongSupplier nanoClock;

  /** Tripped route to the {@link System#nanoTime} of its last sign of slowness. */
  private final Map<Object, Long> tripped = new ConcurrentHashMap<>();

  private final LongAdder trips = new LongAdder();

  /**
   * @param budget how long a request waits; positive
   * @param completions where fallbacks complete
   * @param ownerOf the member owning a key of the shared state, or null when unknown; reads and
   *     writes share its route ({@link Routes#byOwner})
   */
  public CallBudget(Duration budget, Executor completions, Function<Object, Object> ownerOf) {
    this(budget, completions, Routes.byOwner(ownerOf));
  }

  /**
   * @param budget how long a request waits; positive
   * @param completions where fallbacks complete
   * @param routes what the calls on a key wait for
   */
  public CallBudget(Duration budget, Executor completions, Routes routes) {
    this(budget, null, completions, routes);
  }

  /**
   * @param budget how long a request waits; positive
   * @param quiet how long a tripped route must show no sign of slowness before an answer within
   *     the budget closes it; zero closes it at the first such answer; null for the default
   *     (the longer of {@link #MIN_QUIET} and twice the budget)
   * @param completions where fallbacks complete
   * @param routes what the calls on a key wait for
   */
  public CallBudget(Duration budget, Duration quiet, Executor completions, Routes routes) {
    this(budget, quiet, completions, routes, System::nanoTime);
  }

  /** As above, reading time from {@code nanoClock} (a test's clock) instead of {@link System#nanoTime}. */
  CallBudget(
      Duration budget,
      Duration quiet,
      Executor completions,
      Routes routes,
      LongSupplier nanoClock) {
    if (budget == null || budget.isNegative() || budget.isZero()) {
      throw new IllegalArgumentException("budget must be positive: " + budget);
    }
    if (quiet != null && quiet.isNegative()) {
      throw new IllegalArgumentException("quiet must not be negative: " + quiet);
    }
    this.budgetNanos = budget.toNanos();
    this.quietNanos =
        quiet != null ? quiet.toNanos() : Math.max(MIN_QUIET.toNanos(), 2 * budgetNanos);
    this.completions = Objects.requireNonNull(completions, "completions");
    this.routes = Objects.requireNonNull(routes, "routes");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
  }

  /** The budget in milliseconds. */
  public long budgetMillis() {
    return TimeUnit.NANOSECONDS.toMillis(budgetNanos);
  }

  /** How long a tripped route must be quiet before an answer closes it, in milliseconds. */
  public long quietMillis() {
    return TimeUnit.NANOSECONDS.toMillis(quietNanos);
  }

  /** How many times a breaker tripped. */
  public long trips() {
    return trips.sum();
  }

  /** Routes whose breaker is tripped now. */
  public int tripped() {
    long now = nanoClock.getAsLong();
    tripped.entrySet().removeIf(e -> now - e.getValue() > FORGET_AFTER.toNanos());
    return tripped.size();
  }

  /** Whether a write of {@code key} would take its fallback without waiting. */
  public boolean isTripped(Object key) {
    Object route = routes.write(key);
    return route != null && tripped.containsKey(route);
  }

  /**
   * A read's outcome if it completes within the budget (at once while its route is tripped);
   * else {@code fallback}'s, and {@code counted} is incremented. A fallback that throws fails the
   * answer.
   */
  public <T> CompletionStage<T> read(
      Object key, CompletionStage<T> call, Supplier<T> fallback, LongAdder counted) {
    return within(routes.read(key), call, fallback, counted);
  }

  /** As {@link #read}, for a call that changes {@code key} (and so waits for its backups too). */
  public <T> CompletionStage<T> write(
      Object key, CompletionStage<T> call, Supplier<T> fallback, LongAdder counted) {
    return within(routes.write(key), call, fallback, counted);
  }

  private <T> CompletionStage<T> within(
      Object route, CompletionStage<T> call, Supplier<T> fallback, LongAdder counted) {
    long start = nanoClock.getAsLong();
    CompletableFuture<T> out = new CompletableFuture<>();
    Runnable fall =
        () -> {
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
    AtomicBoolean answered = new AtomicBoolean();
    call.whenComplete(
        (v, err) -> {
          answered.set(true);
          boolean requestError = err != null && isRequestError(err);
          if (route != null) {
            long now = nanoClock.getAsLong();
            if ((err == null || requestError) && now - start <= budgetNanos) {
              // closes the breaker only once the route has been quiet long enough
              tripped.computeIfPresent(
                  route, (r, lastSlow) -> now - lastSlow >= quietNanos ? null : lastSlow);
            } else {
              tripped.computeIfPresent(route, (r, t) -> now);
            }
          }
          if (err == null) {
            out.complete(v);
          } else if (requestError) {
            out.completeExceptionally(err);
          } else {
            completions.execute(fall);
          }
        });
    if (out.isDone()) {
      return out;
    }
    if (route != null && tripped.containsKey(route)) {
      fall.run();
    }
    // tripped or not, a call still unanswered at its budget is a sign of slowness
    CompletableFuture.delayedExecutor(budgetNanos, TimeUnit.NANOSECONDS, completions)
        .execute(
            () -> {
              if (!answered.get()
                  && route != null
                  && tripped.put(route, nanoClock.getAsLong()) == null) {
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
