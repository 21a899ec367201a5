package io.kvselect.core.session;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * A latency budget around a shared {@link SessionAffinity} (a cluster-wide map): no request waits
 * for the shared table longer than {@code budget}. When the table has not answered by then (its
 * partition's owner is paused, cut off, or being replaced), the call decides locally:
 *
 * <ul>
 *   <li>{@link #lookup} answers from the near cache of bindings this node saw recently (a read,
 *       a bind, or a local decision), else "unbound", so the caller falls back to the KV-overlap
 *       choice, which usually lands on the session's worker anyway because its prefix is cached
 *       there;
 *   <li>{@link #bindAndLease} answers {@code target} (the caller books it), records the binding as
 *       <em>unconfirmed</em> and lets the shared call go on: when it completes, its answer (the
 *       binding in effect in the table) replaces the near-cache entry; when it fails, the binding
 *       is written again on the next {@link #sweep} with {@code expected = null}, so a binding the
 *       table already holds is never replaced by a fallback;
 *   <li>{@link #releaseLease} answers at once; a failed release is retried on the next sweep.
 * </ul>
 *
 * A failure of the shared table other than a request error ({@link SelectionException}) is
 * treated like a timeout. Every fallback is counted ({@link #stats}).
 *
 * <p><b>Breaker per owner.</b> When a call to a key times out, the member that owns the key
 * ({@code ownerOf}) is taken as unreachable for {@link #OPEN_NANOS}: calls on its keys do not wait
 * at all (a lookup answers from the near cache without asking; a bind or release is still sent,
 * and answered locally at once). So a paused member costs one budget per second, not one per
 * request; keys owned by healthy members are not affected.
 *
 * <p>What a client can observe: during the fault, a session whose binding the node has seen keeps
 * its worker; one it has not seen may be placed by KV overlap (a "move" only when that choice
 * differs from the table's binding); after the fault the table's binding wins (an unconfirmed
 * binding is written only where the table holds none), so a session that was placed elsewhere
 * during the fault returns to its table binding on its next turn.
 *
 * <p>Thread ownership: safe from any thread. The near cache is an access-ordered map guarded by
 * its own monitor (held for O(1) work, never across a call); {@code unconfirmed} and
 * {@code failedReleases} are concurrent maps. Fallbacks run on {@code completions} (the node's
 * event loops) after the JDK's delay scheduler fires; nothing here blocks.
 */
public final class BudgetedSessionAffinity implements SessionAffinity {

  /** Fallback counts, for {@code /metrics} and {@code /cluster}. */
  public record Stats(long lookupFallbacks, long bindFallbacks, long releaseFallbacks, long writeBacks,
      long writeBackConflicts, int unconfirmed, int nearCacheSize) {}

  private record Unconfirmed(String partition, String sessionId, WorkerRank target, String leaseId) {}

  private record Near(WorkerRank rank, long seenMillis) {}

  /** How long an owner whose call timed out is not waited for. */
  static final long OPEN_NANOS = 1_000_000_000L;

  private final SessionAffinity shared;
  private final java.util.function.Function<String, Object> ownerOf;
  private final Map<Object, Long> openUntil = new ConcurrentHashMap<>();
  private final long budgetNanos;
  private final Executor completions;
  private final Clock clock;
  private final long nearTtlMillis;
  private final int nearCapacity;
  private final LinkedHashMap<String, Near> near;
  private final Map<String, Unconfirmed> unconfirmed = new ConcurrentHashMap<>();
  private final Map<String, String[]> failedReleases = new ConcurrentHashMap<>();
  private final LongAdder lookupFallbacks = new LongAdder();
  private final LongAdder bindFallbacks = new LongAdder();
  private final LongAdder releaseFallbacks = new LongAdder();
  private final LongAdder writeBacks = new LongAdder();
  private final LongAdder conflicts = new LongAdder();

  /**
   * @param shared the cluster-wide table
   * @param budget how long a request waits for it; positive
   * @param nearTtl how long a near-cache entry may answer a fallback (the table's idle TTL)
   * @param nearCapacity near-cache entries kept (least recently used dropped first); positive
   * @param completions where fallbacks complete (the node's event loops)
   * @param ownerOf the member owning a key ({@code partition.length() + ":" + partition +
   *     sessionId}) of the shared table, or null when unknown (no breaker then)
   */
  public BudgetedSessionAffinity(SessionAffinity shared, Duration budget, Clock clock, Duration nearTtl,
      int nearCapacity, Executor completions, java.util.function.Function<String, Object> ownerOf) {
    this.shared = Objects.requireNonNull(shared, "shared");
    this.ownerOf = Objects.requireNonNull(ownerOf, "ownerOf");
    if (budget == null || budget.isNegative() || budget.isZero()) {
      throw new IllegalArgumentException("budget must be positive: " + budget);
    }
    if (nearCapacity <= 0) {
      throw new IllegalArgumentException("nearCapacity must be positive");
    }
    this.budgetNanos = budget.toNanos();
    this.clock = Objects.requireNonNull(clock, "clock");
    this.nearTtlMillis = nearTtl.toMillis();
    this.nearCapacity = nearCapacity;
    this.completions = Objects.requireNonNull(completions, "completions");
    this.near = new LinkedHashMap<>(1024, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Near> e) {
        return size() > BudgetedSessionAffinity.this.nearCapacity;
      }
    };
  }

  /** The owner of {@code k} while its breaker is open, else null. */
  private Object open(String k) {
    Object owner = ownerOf.apply(k);
    if (owner == null) {
      return null;
    }
    Long until = openUntil.get(owner);
    if (until == null) {
      return null;
    }
    if (System.nanoTime() - until >= 0) {
      openUntil.remove(owner, until);
      return null;
    }
    return owner;
  }

  private void trip(String k) {
    Object owner = ownerOf.apply(k);
    if (owner != null) {
      openUntil.put(owner, System.nanoTime() + OPEN_NANOS);
    }
  }

  private static String key(String partition, String sessionId) {
    return partition.length() + ":" + partition + sessionId;
  }

  @Override
  public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
    try {
      SessionAffinity.requireValidSessionId(sessionId);
      Objects.requireNonNull(partition, "partition");
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    String k = key(partition, sessionId);
    if (open(k) != null) {
      lookupFallbacks.increment();
      return CompletableFuture.completedFuture(Optional.ofNullable(nearGet(k)));
    }
    CompletionStage<Optional<WorkerRank>> call = shared.lookup(partition, sessionId).thenApply(o -> {
      remember(k, o.orElse(null));
      return o;
    });
    return within(k, call, () -> Optional.ofNullable(nearGet(k)), lookupFallbacks);
  }

  @Override
  public CompletionStage<WorkerRank> bindAndLease(String partition, String sessionId, WorkerRank expected,
      WorkerRank target, String leaseId) {
    try {
      Objects.requireNonNull(partition, "partition");
      SessionAffinity.requireValidSessionId(sessionId);
      Objects.requireNonNull(target, "target");
      Objects.requireNonNull(leaseId, "leaseId");
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    String k = key(partition, sessionId);
    Unconfirmed mine = new Unconfirmed(partition, sessionId, target, leaseId);
    CompletionStage<WorkerRank> call = shared.bindAndLease(partition, sessionId, expected, target, leaseId);
    CompletableFuture<WorkerRank> out = new CompletableFuture<>();
    call.whenComplete((won, err) -> {
      if (err == null) {
        remember(k, won);
        if (!out.complete(won)) {
          // answered by the fallback: the table has decided since
          unconfirmed.remove(k, mine);
          writeBacks.increment();
          if (!won.equals(target)) {
            conflicts.increment();
          }
        }
      } else if (!out.isDone() && isRequestError(err)) {
        out.completeExceptionally(err);
      } else {
        fallBackToLocal(out, k, mine);
      }
    });
    if (!out.isDone()) {
      if (open(k) != null) {
        fallBackToLocal(out, k, mine);
      } else {
        CompletableFuture.delayedExecutor(budgetNanos, TimeUnit.NANOSECONDS, completions).execute(() -> {
          if (!out.isDone()) {
            trip(k);
          }
          fallBackToLocal(out, k, mine);
        });
      }
    }
    return out;
  }

  private void fallBackToLocal(CompletableFuture<WorkerRank> out, String k, Unconfirmed mine) {
    if (out.complete(mine.target())) {
      bindFallbacks.increment();
      unconfirmed.put(k, mine);
      remember(k, mine.target());
    }
  }

  @Override
  public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
    if (partition == null || sessionId == null || sessionId.isEmpty() || leaseId == null) {
      return CompletableFuture.completedFuture(null);
    }
    String k = key(partition, sessionId);
    Unconfirmed u = unconfirmed.get(k);
    if (u != null && u.leaseId() != null && u.leaseId().equals(leaseId)) {
      // the binding is still to be written: write it without this lease
      unconfirmed.replace(k, u, new Unconfirmed(partition, sessionId, u.target(), null));
    }
    CompletionStage<Void> call = shared.releaseLease(partition, sessionId, leaseId)
        .whenComplete((v, err) -> {
          if (err != null) {
            failedReleases.put(k + "|" + leaseId, new String[] {partition, sessionId, leaseId});
          }
        });
    if (open(k) != null) {
      releaseFallbacks.increment();
      return CompletableFuture.completedFuture(null);
    }
    return within(k, call, () -> null, releaseFallbacks);
  }

  /**
   * Writes back unconfirmed bindings and failed releases (each housekeeping period), then sweeps
   * the shared table. A write-back binds with {@code expected = null}: the table's own binding,
   * if it has one, wins and replaces the near-cache entry.
   */
  @Override
  public CompletionStage<Integer> sweep() {
    List<CompletableFuture<?>> writes = new ArrayList<>();
    for (Map.Entry<String, Unconfirmed> e : unconfirmed.entrySet()) {
      Unconfirmed u = e.getValue();
      String lease = u.leaseId() != null ? u.leaseId() : "write-back-" + System.nanoTime();
      writes.add(shared.bindAndLease(u.partition(), u.sessionId(), null, u.target(), lease)
          .thenCompose(won -> {
            unconfirmed.remove(e.getKey(), u);
            remember(e.getKey(), won);
            writeBacks.increment();
            if (!won.equals(u.target())) {
              conflicts.increment();
            }
            return u.leaseId() != null ? CompletableFuture.<Void>completedFuture(null)
                : shared.releaseLease(u.partition(), u.sessionId(), lease);
          }).toCompletableFuture());
    }
    for (Map.Entry<String, String[]> e : failedReleases.entrySet()) {
      String[] r = e.getValue();
      writes.add(shared.releaseLease(r[0], r[1], r[2]).thenRun(() -> failedReleases.remove(e.getKey()))
          .toCompletableFuture());
    }
    CompletableFuture<Void> all = CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))
        .exceptionally(err -> null);
    return all.thenCompose(v -> shared.sweep());
  }

  @Override
  public CompletionStage<Void> removeWorker(long workerId) {
    synchronized (near) {
      near.values().removeIf(n -> n.rank() != null && n.rank().workerId() == workerId);
    }
    unconfirmed.values().removeIf(u -> u.target().workerId() == workerId);
    return shared.removeWorker(workerId);
  }

  @Override
  public int size() {
    return shared.size();
  }

  /** The fallbacks so far and what is still to be written. */
  public Stats stats() {
    int n;
    synchronized (near) {
      n = near.size();
    }
    return new Stats(lookupFallbacks.sum(), bindFallbacks.sum(), releaseFallbacks.sum(), writeBacks.sum(),
        conflicts.sum(), unconfirmed.size(), n);
  }

  private void remember(String k, WorkerRank rank) {
    synchronized (near) {
      if (rank == null) {
        near.remove(k);
      } else {
        near.put(k, new Near(rank, clock.millis()));
      }
    }
  }

  private WorkerRank nearGet(String k) {
    synchronized (near) {
      Near n = near.get(k);
      if (n == null) {
        return null;
      }
      if (clock.millis() - n.seenMillis() > nearTtlMillis) {
        near.remove(k);
        return null;
      }
      return n.rank();
    }
  }

  private static boolean isRequestError(Throwable err) {
    return SelectionException.unwrap(err) instanceof SelectionException;
  }

  /**
   * {@code call}'s outcome if it arrives within the budget; else {@code fallback}'s, computed on
   * {@code completions}. A failure that is not a request error also takes the fallback.
   */
  private <T> CompletionStage<T> within(String k, CompletionStage<T> call, Supplier<T> fallback,
      LongAdder counted) {
    CompletableFuture<T> out = new CompletableFuture<>();
    Runnable fall = () -> {
      if (!out.isDone()) {
        try {
          if (out.complete(fallback.get())) {
            counted.increment();
          }
        } catch (RuntimeException e) {
          out.completeExceptionally(e);
        }
      }
    };
    call.whenComplete((v, err) -> {
      if (err == null) {
        out.complete(v);
      } else if (isRequestError(err)) {
        out.completeExceptionally(err);
      } else {
        completions.execute(fall);
      }
    });
    if (!out.isDone()) {
      CompletableFuture.delayedExecutor(budgetNanos, TimeUnit.NANOSECONDS, completions).execute(() -> {
        if (!out.isDone()) {
          trip(k);
        }
        fall.run();
      });
    }
    return out;
  }
}
