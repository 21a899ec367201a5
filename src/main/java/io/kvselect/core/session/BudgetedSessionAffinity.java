package io.kvselect.core.session;

import io.kvselect.core.budget.CallBudget;
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
import java.util.concurrent.atomic.LongAdder;

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
 * A failure of the shared table other than a request error ({@link io.kvselect.core.error.SelectionException}) is
 * treated like a timeout. Every fallback is counted ({@link #stats}).
 *
 * <p>The budget and its breaker per owner member are a {@link CallBudget}: after one call on a
 * paused member's keys timed out, calls on its keys take their fallback without waiting until one
 * of them completes.
 *
 * <p>What a client can observe: during the fault, a session whose binding the node has seen keeps
 * its worker; one it has not seen may be placed by KV overlap (a "move" only when that choice
 * differs from the table's binding); after the fault the table's binding wins (an unconfirmed
 * binding is written only where the table holds none), so a session that was placed elsewhere
 * during the fault returns to its table binding on its next turn.
 *
 * <p>Thread ownership: safe from any thread. The near cache is an access-ordered map guarded by
 * its own monitor (held for O(1) work, never across a call); {@code unconfirmed} and
 * {@code failedReleases} are concurrent maps; nothing here blocks.
 */
public final class BudgetedSessionAffinity implements SessionAffinity {

  /** Fallback counts, for {@code /metrics} and {@code /cluster}. */
  public record Stats(
      long lookupFallbacks,
      long bindFallbacks,
      long releaseFallbacks,
      long writeBacks,
      long writeBackConflicts,
      int unconfirmed,
      int nearCacheSize,
      long restoredLookups) {}

  private record Unconfirmed(
      String partition, String sessionId, WorkerRank target, String leaseId) {}

  private record Near(WorkerRank rank, long seenMillis) {}

  private final SessionAffinity shared;
  private final CallBudget budget;
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
  private final LongAdder restoredLookups = new LongAdder();

  /**
   * Sessions whose lookup answered a near-cache binding the table did not hold, until their next
   * bind (key -> the rank answered). Bounded by the near cache: an entry is dropped with it.
   */
  private final Map<String, WorkerRank> restored = new ConcurrentHashMap<>();

  /**
   * @param shared the cluster-wide table
   * @param budget how long a request waits for it, and the breaker per owner
   * @param nearTtl how long a near-cache entry may answer a fallback (the table's idle TTL)
   * @param nearCapacity near-cache entries kept (least recently used dropped first); positive
   */
  public BudgetedSessionAffinity(
      SessionAffinity shared, CallBudget budget, Clock clock, Duration nearTtl, int nearCapacity) {
    this.shared = Objects.requireNonNull(shared, "shared");
    this.budget = Objects.requireNonNull(budget, "budget");
    if (nearCapacity <= 0) {
      throw new IllegalArgumentException("nearCapacity must be positive");
    }
    this.clock = Objects.requireNonNull(clock, "clock");
    this.nearTtlMillis = nearTtl.toMillis();
    this.nearCapacity = nearCapacity;
    this.near =
        new LinkedHashMap<>(1024, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Near> e) {
            return size() > BudgetedSessionAffinity.this.nearCapacity;
          }
        };
  }

  /** The budget (for reports). */
  public CallBudget budget() {
    return budget;
  }

  /**
   * The key of a (partition, session) pair in a shared table: the partition's length first, so no
   * pair collides with another. The shared table must use the same key, since the breaker asks
   * the table's owner of it ({@code HazelcastSessionAffinity} does).
   */
  public static String key(String partition, String sessionId) {
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
    CompletionStage<Optional<WorkerRank>> call =
        shared
            .lookup(partition, sessionId)
            .thenApply(
                o -> {
                  if (o.isPresent()) {
                    remember(k, o.get());
                    return o;
                  }
                  // the table has no binding, this node saw one within the idle TTL: the table
                  // lost it (its side of a split held neither the partition nor its backup, or it
                  // merged back without it). Answer what this node saw; the next bind writes it
                  // where the table holds none.
                  WorkerRank seen = nearGet(k);
                  if (seen == null) {
                    return o;
                  }
                  if (restored.size() >= nearCapacity) {
                    restored.clear();
                  }
                  restored.put(k, seen);
                  restoredLookups.increment();
                  return Optional.of(seen);
                });
    return budget.read(k, call, () -> Optional.ofNullable(nearGet(k)), lookupFallbacks);
  }

  @Override
  public CompletionStage<WorkerRank> bindAndLease(
      String partition, String sessionId, WorkerRank expected, WorkerRank target, String leaseId) {
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
    // a binding restored from the near cache is not in the table: bind it only where the table
    // holds none (a binding made meanwhile by another node wins)
    WorkerRank restoredRank = restored.remove(k);
    WorkerRank tableExpected =
        restoredRank != null && restoredRank.equals(expected) ? null : expected;
    CompletionStage<WorkerRank> call =
        shared.bindAndLease(partition, sessionId, tableExpected, target, leaseId);
    call.whenComplete(
        (won, err) -> {
          if (err == null) {
            remember(k, won);
            if (unconfirmed.remove(k, mine)) {
              // answered by the fallback: the table has decided since
              writeBacks.increment();
              if (!won.equals(target)) {
                conflicts.increment();
              }
            }
          }
        });
    return budget.write(
        k,
        call,
        () -> {
          unconfirmed.put(k, mine);
          remember(k, target);
          return target;
        },
        bindFallbacks);
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
    CompletionStage<Void> call =
        shared
            .releaseLease(partition, sessionId, leaseId)
            .whenComplete(
                (v, err) -> {
                  if (err != null) {
                    failedReleases.put(
                        k + "|" + leaseId, new String[] {partition, sessionId, leaseId});
                  }
                });
    return budget.write(k, call, () -> null, releaseFallbacks);
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
      writes.add(
          shared
              .bindAndLease(u.partition(), u.sessionId(), null, u.target(), lease)
              .thenCompose(
                  won -> {
                    unconfirmed.remove(e.getKey(), u);
                    remember(e.getKey(), won);
                    writeBacks.increment();
                    if (!won.equals(u.target())) {
                      conflicts.increment();
                    }
                    return u.leaseId() != null
                        ? CompletableFuture.<Void>completedFuture(null)
                        : shared.releaseLease(u.partition(), u.sessionId(), lease);
                  })
              .toCompletableFuture());
    }
    for (Map.Entry<String, String[]> e : failedReleases.entrySet()) {
      String[] r = e.getValue();
      writes.add(
          shared
              .releaseLease(r[0], r[1], r[2])
              .thenRun(() -> failedReleases.remove(e.getKey()))
              .toCompletableFuture());
    }
    CompletableFuture<Void> all =
        CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new))
            .exceptionally(err -> null);
    return all.thenCompose(v -> shared.sweep());
  }

  @Override
  public CompletionStage<Void> removeWorker(long workerId) {
    synchronized (near) {
      // remember never stores a null rank
      near.values().removeIf(n -> n.rank().workerId() == workerId);
    }
    unconfirmed.values().removeIf(u -> u.target().workerId() == workerId);
    restored.values().removeIf(r -> r.workerId() == workerId);
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
    return new Stats(
        lookupFallbacks.sum(),
        bindFallbacks.sum(),
        releaseFallbacks.sum(),
        writeBacks.sum(),
        conflicts.sum(),
        unconfirmed.size(),
        n,
        restoredLookups.sum());
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
}
