// Over 400 lines: one seam implementation (lookups, binds, releases, sweep) over one Hazelcast map
// with its near cache and latency budget, which every method shares.
package io.kvselect.server.cluster;

import com.hazelcast.aggregation.Aggregator;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.IMap;
import com.hazelcast.query.Predicate;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.session.SessionAffinity;
import java.io.Serializable;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * {@link SessionAffinity} shared by every node of a cluster: the bindings live in the Hazelcast
 * {@code IMap} {@value ClusterBootstrap#SESSIONS_MAP}, one entry per (partition, session), with
 * one synchronous backup ({@code cluster.xml}), so a member that dies loses no binding.
 *
 * <p><b>Why an IMap and not a ReplicatedMap.</b> A binding must be compare-and-bind atomic
 * cluster-wide: when several nodes see a new session's first booking at once, exactly one target
 * may win and every node must learn which. An IMap key has one owner member that applies the
 * operations on it one at a time, so an entry processor (read, compare, write) is atomic, and its
 * synchronous backup is written before the caller hears back. A ReplicatedMap copies every entry
 * to every member and applies writes locally first, reconciling later (last write wins): two
 * nodes binding the same new session at once would both "win" until the copies converge, which
 * is exactly the split the issue forbids. Reads of an IMap cost a hop to the owner; bookings
 * already pay one, and lookups are one async get.
 *
 * <p>Every operation is asynchronous (the IMap's async API, entry processors through
 * {@code submitToKey}); the whole-map ones ({@link #sweep}, {@link #removeWorker}) run on the
 * {@code blocking} executor (a worker thread), never on an event loop. Stages complete on
 * {@code completions} (the node's event loops), never on Hazelcast's own threads.
 *
 * <p>Semantics match {@link io.kvselect.core.session.LocalSessionAffinity}: a binding with a
 * lease never expires; the idle TTL runs from the release of its last lease; an expired binding
 * reads as absent and a new booking replaces it; {@link #sweep} removes expired bindings. Times
 * come from the service {@link Clock} of the calling node and travel inside each operation, so the
 * owner and its backup apply the same decision. The per-partition capacity is checked against a
 * count every node refreshes on {@link #sweep} (each housekeeping period) and increments for the
 * bindings it creates itself: bindings created on other nodes since the last sweep are not yet
 * counted, so a burst may exceed the cap by up to one period's new sessions.
 *
 * <p>Serialization: bindings, entry processors, predicates and the aggregator are plain
 * {@link Serializable} records and classes. Every member runs the same jar, so no class needs to
 * travel and no serializer factory needs registering; each message is a few hundred bytes, well
 * below where Compact or IdentifiedDataSerializable would pay off.
 *
 * <p>Leases are stored with the booking member's id ({@code memberUuid|leaseId}): the reservations
 * behind them live in that member's process, so when a member leaves the survivors release its
 * leases ({@link #releaseLeasesOf}) and those bindings age out on the idle TTL like any other.
 *
 * <p>Threading: holds no lock; {@code counts} is a concurrent map written by the sweep and by
 * completions of binds that created an entry.
 */
public final class HazelcastSessionAffinity implements SessionAffinity {

  /** A bound session as stored in the map. {@code idleDeadlineMillis} counts only while {@code leases} is empty. */
  record Binding(
      String partition,
      long workerId,
      int dpRank,
      ArrayList<String> leases,
      long idleDeadlineMillis)
      implements Serializable {

    boolean expired(long now) {
      return leases.isEmpty() && now >= idleDeadlineMillis;
    }

    WorkerRank target() {
      return new WorkerRank(workerId, dpRank);
    }
  }

  /** The outcome of a bind: the binding in effect, whether the entry was created, or a full table. */
  record BindResult(long workerId, int dpRank, boolean created, boolean full)
      implements Serializable {}

  private final HazelcastInstance hazelcast;
  private final IMap<String, Binding> map;

  /** This member's lease prefix: leases are stored as {@code memberUuid|leaseId}. */
  private final String leasePrefix;

  private final Clock clock;
  private final long idleTtlMillis;
  private final int maxEntriesPerPartition;
  private final Executor blocking;
  private final Executor completions;

  /** Bindings per partition as last counted (see the class comment). */
  private final Map<String, Integer> counts = new ConcurrentHashMap<>();

  /**
   * @param idleTtl how long a binding survives its last lease; positive
   * @param maxEntriesPerPartition bindings per partition; positive
   * @param blocking runs the whole-map operations (a worker pool)
   * @param completions where returned stages complete (the event loops)
   */
  public HazelcastSessionAffinity(
      HazelcastInstance hazelcast,
      Clock clock,
      Duration idleTtl,
      int maxEntriesPerPartition,
      Executor blocking,
      Executor completions) {
    this.hazelcast = hazelcast;
    this.map = hazelcast.getMap(ClusterBootstrap.SESSIONS_MAP);
    this.leasePrefix = hazelcast.getCluster().getLocalMember().getUuid() + "|";
    this.clock = Objects.requireNonNull(clock, "clock");
    if (idleTtl == null || idleTtl.isNegative() || idleTtl.isZero()) {
      throw new IllegalArgumentException("idle TTL must be positive: " + idleTtl);
    }
    if (maxEntriesPerPartition <= 0) {
      throw new IllegalArgumentException("maxEntriesPerPartition must be positive");
    }
    this.idleTtlMillis = idleTtl.toMillis();
    this.maxEntriesPerPartition = maxEntriesPerPartition;
    this.blocking = Objects.requireNonNull(blocking, "blocking");
    this.completions = Objects.requireNonNull(completions, "completions");
    hazelcast
        .getCluster()
        .addMembershipListener(
            new com.hazelcast.cluster.MembershipListener() {
              @Override
              public void memberAdded(com.hazelcast.cluster.MembershipEvent e) {}

              @Override
              public void memberRemoved(com.hazelcast.cluster.MembershipEvent e) {
                releaseLeasesOf(e.getMember().getUuid().toString());
              }
            });
  }

  /**
   * Releases every lease a departed member held (its reservations died with it), so that its
   * sessions' bindings start their idle TTL instead of living forever. Every survivor runs it;
   * it is idempotent.
   */
  CompletionStage<Integer> releaseLeasesOf(String memberUuid) {
    String prefix = memberUuid + "|";
    long deadline = clock.millis() + idleTtlMillis;
    return onBlocking(
        () ->
            map.executeOnEntries(new DropLeases(prefix, deadline), new HasLeaseOf(prefix)).size());
  }

  /** The map key ({@link io.kvselect.core.session.BudgetedSessionAffinity#key}, which the call budget's breaker uses). */
  static String key(String partition, String sessionId) {
    return io.kvselect.core.session.BudgetedSessionAffinity.key(partition, sessionId);
  }

  @Override
  public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
    try {
      SessionAffinity.requireValidSessionId(sessionId);
      Objects.requireNonNull(partition, "partition");
      long now = clock.millis();
      return hop(map.getAsync(key(partition, sessionId)))
          .thenApply(b -> b == null || b.expired(now) ? Optional.empty() : Optional.of(b.target()));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<WorkerRank> bindAndLease(
      String partition, String sessionId, WorkerRank expected, WorkerRank target, String leaseId) {
    try {
      Objects.requireNonNull(partition, "partition");
      SessionAffinity.requireValidSessionId(sessionId);
      Objects.requireNonNull(target, "target");
      Objects.requireNonNull(leaseId, "leaseId");
      boolean full = counts.getOrDefault(partition, 0) >= maxEntriesPerPartition;
      Bind op =
          new Bind(
              partition,
              expected == null ? null : new long[] {expected.workerId(), expected.dpRank()},
              target.workerId(),
              target.dpRank(),
              leasePrefix + leaseId,
              clock.millis(),
              full);
      return hop(map.submitToKey(key(partition, sessionId), op))
          .thenApply(
              r -> {
                if (r.full()) {
                  throw SelectionException.notReady("session affinity table is full");
                }
                if (r.created()) {
                  counts.merge(partition, 1, Integer::sum);
                }
                return new WorkerRank(r.workerId(), r.dpRank());
              });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
    if (partition == null || sessionId == null || sessionId.isEmpty() || leaseId == null) {
      return CompletableFuture.completedFuture(null);
    }
    return hop(map.submitToKey(
            key(partition, sessionId),
            new Release(leasePrefix + leaseId, clock.millis() + idleTtlMillis)))
        .thenApply(x -> null);
  }

  /**
   * Removes expired bindings (only the cluster's oldest member does, so the map is scanned once
   * per period, not once per node) and refreshes the per-partition counts (every node). Both are
   * whole-map scans on the owners, O(bindings), run on the worker pool.
   */
  @Override
  public CompletionStage<Integer> sweep() {
    long now = clock.millis();
    return onBlocking(
        () -> {
          boolean oldest = hazelcast.getCluster().getMembers().iterator().next().localMember();
          int removed = oldest ? map.executeOnEntries(new Remove(), new Expired(now)).size() : 0;
          Map<String, Integer> fresh = map.aggregate(new CountByPartition());
          counts.keySet().retainAll(fresh.keySet());
          counts.putAll(fresh);
          return removed;
        });
  }

  @Override
  public CompletionStage<Void> removeWorker(long workerId) {
    return onBlocking(
        () -> {
          map.executeOnEntries(new Remove(), new TargetsWorker(workerId));
          return null;
        });
  }

  /** Bindings whose primary copy this member holds (a local view, no remote call). */
  @Override
  public int size() {
    return (int) map.getLocalMapStats().getOwnedEntryCount();
  }

  private <T> CompletionStage<T> hop(CompletionStage<T> stage) {
    return ClusterStages.hop(stage, completions);
  }

  private <T> CompletionStage<T> onBlocking(java.util.concurrent.Callable<T> body) {
    return ClusterStages.onBlocking(body, blocking, completions);
  }

  /**
   * Compare-and-bind on the key's owner (and, with the same inputs, on its backup): the rules of
   * {@link SessionAffinity#bindAndLease}.
   */
  record Bind(
      String partition,
      long[] expected,
      long workerId,
      int dpRank,
      String leaseId,
      long now,
      boolean full)
      implements EntryProcessor<String, Binding, BindResult> {

    @Override
    public BindResult process(Map.Entry<String, Binding> entry) {
      Binding b = entry.getValue();
      if (b != null && b.expired(now)) {
        b = null;
      }
      if (b != null && !same(b, expected) && !(b.workerId() == workerId && b.dpRank() == dpRank)) {
        return new BindResult(b.workerId(), b.dpRank(), false, false);
      }
      if (b == null && full) {
        return new BindResult(workerId, dpRank, false, true);
      }
      ArrayList<String> leases = b == null ? new ArrayList<>(2) : new ArrayList<>(b.leases());
      if (!leases.contains(leaseId)) {
        leases.add(leaseId);
      }
      entry.setValue(
          new Binding(partition, workerId, dpRank, leases, b == null ? 0 : b.idleDeadlineMillis()));
      return new BindResult(workerId, dpRank, b == null, false);
    }

    private static boolean same(Binding b, long[] expected) {
      return expected != null && b.workerId() == expected[0] && b.dpRank() == (int) expected[1];
    }
  }

  /** Drops a lease; the last one starts the idle TTL. */
  record Release(String leaseId, long idleDeadlineMillis)
      implements EntryProcessor<String, Binding, Boolean> {

    @Override
    public Boolean process(Map.Entry<String, Binding> entry) {
      Binding b = entry.getValue();
      if (b == null || !b.leases().contains(leaseId)) {
        return false;
      }
      ArrayList<String> leases = new ArrayList<>(b.leases());
      leases.remove(leaseId);
      entry.setValue(
          new Binding(
              b.partition(),
              b.workerId(),
              b.dpRank(),
              leases,
              leases.isEmpty() ? idleDeadlineMillis : b.idleDeadlineMillis()));
      return true;
    }
  }

  /** Drops the leases carrying {@code prefix}; the last one starts the idle TTL. */
  record DropLeases(String prefix, long idleDeadlineMillis)
      implements EntryProcessor<String, Binding, Boolean> {
    @Override
    public Boolean process(Map.Entry<String, Binding> entry) {
      Binding b = entry.getValue();
      if (b == null) {
        return false;
      }
      ArrayList<String> leases = new ArrayList<>(b.leases());
      if (!leases.removeIf(l -> l.startsWith(prefix))) {
        return false;
      }
      entry.setValue(
          new Binding(
              b.partition(),
              b.workerId(),
              b.dpRank(),
              leases,
              leases.isEmpty() ? idleDeadlineMillis : b.idleDeadlineMillis()));
      return true;
    }
  }

  /** Bindings holding a lease of the member whose leases start with {@code prefix}. */
  record HasLeaseOf(String prefix) implements Predicate<String, Binding> {
    @Override
    public boolean apply(Map.Entry<String, Binding> e) {
      return e.getValue() != null
          && e.getValue().leases().stream().anyMatch(l -> l.startsWith(prefix));
    }
  }

  /** Removes the entry it runs on. */
  static final class Remove implements EntryProcessor<String, Binding, Boolean> {
    private static final long serialVersionUID = 1L;

    @Override
    public Boolean process(Map.Entry<String, Binding> entry) {
      entry.setValue(null);
      return true;
    }
  }

  /** Bindings idle past their deadline at {@code now}. */
  record Expired(long now) implements Predicate<String, Binding> {
    @Override
    public boolean apply(Map.Entry<String, Binding> e) {
      return e.getValue() != null && e.getValue().expired(now);
    }
  }

  /** Bindings that target a rank of {@code workerId}. */
  record TargetsWorker(long workerId) implements Predicate<String, Binding> {
    @Override
    public boolean apply(Map.Entry<String, Binding> e) {
      return e.getValue() != null && e.getValue().workerId() == workerId;
    }
  }

  /** Counts bindings per partition, cluster-wide. */
  static final class CountByPartition
      implements Aggregator<Map.Entry<String, Binding>, Map<String, Integer>> {
    private static final long serialVersionUID = 1L;
    private final HashMap<String, Integer> counts = new HashMap<>();

    @Override
    public void accumulate(Map.Entry<String, Binding> e) {
      counts.merge(e.getValue().partition(), 1, Integer::sum);
    }

    @Override
    public void combine(Aggregator aggregator) {
      ((CountByPartition) aggregator).counts.forEach((k, v) -> counts.merge(k, v, Integer::sum));
    }

    @Override
    public Map<String, Integer> aggregate() {
      return new HashMap<>(counts);
    }
  }

  /** The counts the capacity check uses (tests). */
  Map<String, Integer> counts() {
    return Map.copyOf(counts);
  }
}
