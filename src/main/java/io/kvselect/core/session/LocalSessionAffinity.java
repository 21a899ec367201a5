package io.kvselect.core.session;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;

/**
 * {@link SessionAffinity} held in this process: one hash table per partition, each capped at
 * {@code maxEntriesPerPartition} bindings.
 *
 * <p>Threading: owns its tables; every operation synchronizes on this instance (a leaf lock:
 * critical sections are short and never call out), and every returned stage is already
 * complete.
 *
 * <p>Complexity: {@link #lookup}, {@link #bindAndLease} and {@link #releaseLease} are O(1)
 * expected (a bind into a full table first sweeps that table, O(table)); {@link #sweep} and
 * {@link #removeWorker} are O(all bindings); {@link #size} is O(partitions).
 */
public final class LocalSessionAffinity implements SessionAffinity {

  /**
   * A bound session. {@code idleDeadlineMillis} is meaningful only while {@code leases} is empty;
   * it is set when the last lease is released.
   */
  private static final class Binding {
    WorkerRank target;
    final Set<String> leases = new HashSet<>(2);
    long idleDeadlineMillis;

    Binding(WorkerRank target) {
      this.target = target;
    }

    boolean expired(long now) {
      return leases.isEmpty() && now >= idleDeadlineMillis;
    }
  }

  private final Clock clock;
  private final long idleTtlMillis;
  private final int maxEntriesPerPartition;

  /** Partition key to its table; a table is dropped when its last binding goes. */
  private final Map<String, Map<String, Binding>> tables = new HashMap<>();

  /** A table with Dynamo's capacity, {@value SessionAffinity#MAX_ENTRIES} per partition. */
  public LocalSessionAffinity(Clock clock, Duration idleTtl) {
    this(clock, idleTtl, MAX_ENTRIES);
  }

  /**
   * @param idleTtl how long a binding survives after its last lease is released; positive
   * @param maxEntriesPerPartition bindings per partition table; positive
   */
  public LocalSessionAffinity(Clock clock, Duration idleTtl, int maxEntriesPerPartition) {
    this.clock = Objects.requireNonNull(clock, "clock");
    if (idleTtl == null || idleTtl.isNegative() || idleTtl.isZero()) {
      throw new IllegalArgumentException("idle TTL must be positive: " + idleTtl);
    }
    if (maxEntriesPerPartition <= 0) {
      throw new IllegalArgumentException("maxEntriesPerPartition must be positive");
    }
    this.idleTtlMillis = idleTtl.toMillis();
    this.maxEntriesPerPartition = maxEntriesPerPartition;
  }

  @Override
  public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
    try {
      return CompletableFuture.completedFuture(lookupNow(partition, sessionId));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<WorkerRank> bindAndLease(
      String partition, String sessionId, WorkerRank expected, WorkerRank target, String leaseId) {
    try {
      return CompletableFuture.completedFuture(
          bindNow(partition, sessionId, expected, target, leaseId));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
    releaseNow(partition, sessionId, leaseId);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Integer> sweep() {
    return CompletableFuture.completedFuture(sweepNow());
  }

  @Override
  public CompletionStage<Void> removeWorker(long workerId) {
    synchronized (this) {
      removeAll(b -> b.target.workerId() == workerId);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized int size() {
    int n = 0;
    for (Map<String, Binding> table : tables.values()) {
      n += table.size();
    }
    return n;
  }

  private synchronized Optional<WorkerRank> lookupNow(String partition, String sessionId) {
    SessionAffinity.requireValidSessionId(sessionId);
    Map<String, Binding> table = tables.get(Objects.requireNonNull(partition, "partition"));
    if (table == null) {
      return Optional.empty();
    }
    Binding b = table.get(sessionId);
    if (b == null) {
      return Optional.empty();
    }
    if (b.expired(clock.millis())) {
      remove(partition, table, sessionId);
      return Optional.empty();
    }
    return Optional.of(b.target);
  }

  private synchronized WorkerRank bindNow(
      String partition, String sessionId, WorkerRank expected, WorkerRank target, String leaseId) {
    Objects.requireNonNull(partition, "partition");
    SessionAffinity.requireValidSessionId(sessionId);
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(leaseId, "leaseId");
    long now = clock.millis();
    Map<String, Binding> table = tables.get(partition);
    Binding b = table == null ? null : table.get(sessionId);
    if (b != null && b.expired(now)) {
      table.remove(sessionId);
      b = null;
    }
    WorkerRank current = b == null ? null : b.target;
    if (current != null && !current.equals(expected) && !current.equals(target)) {
      return current;
    }
    if (b == null) {
      if (table == null) {
        table = new HashMap<>();
      } else if (table.size() >= maxEntriesPerPartition) {
        table.values().removeIf(x -> x.expired(now));
      }
      if (table.size() >= maxEntriesPerPartition) {
        throw SelectionException.notReady("session affinity table is full");
      }
      tables.putIfAbsent(partition, table);
      b = new Binding(target);
      table.put(sessionId, b);
    } else {
      b.target = target;
    }
    b.leases.add(leaseId);
    return target;
  }

  private synchronized void releaseNow(String partition, String sessionId, String leaseId) {
    Map<String, Binding> table = tables.get(partition);
    Binding b = table == null ? null : table.get(sessionId);
    if (b != null && b.leases.remove(leaseId) && b.leases.isEmpty()) {
      b.idleDeadlineMillis = clock.millis() + idleTtlMillis;
    }
  }

  private synchronized int sweepNow() {
    long now = clock.millis();
    return removeAll(b -> b.expired(now));
  }

  private int removeAll(Predicate<Binding> doomed) {
    int removed = 0;
    Iterator<Map<String, Binding>> tablesIt = tables.values().iterator();
    while (tablesIt.hasNext()) {
      Map<String, Binding> table = tablesIt.next();
      int before = table.size();
      table.values().removeIf(doomed);
      removed += before - table.size();
      if (table.isEmpty()) {
        tablesIt.remove();
      }
    }
    return removed;
  }

  private void remove(String partition, Map<String, Binding> table, String sessionId) {
    table.remove(sessionId);
    if (table.isEmpty()) {
      tables.remove(partition);
    }
  }
}
