package io.kvselect.server.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.EntryProcessor;
import com.hazelcast.map.ExtendedMapEntry;
import com.hazelcast.map.IMap;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.KvcSnapshot;
import io.kvselect.core.kvc.KvcState;
import io.kvselect.core.kvc.ResetScope;
import java.io.Serializable;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * {@link KvcState} shared by every node of a cluster, so that a session's turns routed by
 * different nodes see one pin, one set of reject counters and one turn count, and every node
 * reads the same in-flight and assigned counts per decode worker.
 *
 * <p>Two Hazelcast {@code IMap}s, each with Hazelcast's default of one synchronous backup (no
 * entry in {@code cluster.xml} overrides it), so a member that dies loses no state:
 * <ul>
 *   <li>{@value #SESSIONS_MAP}: one entry per (partition, session) holding its pin, its reject
 *       counters and its turn count. Each entry lives {@code sessionIdle} past its last write (a
 *       per-entry TTL refreshed by every write), the cluster's counterpart of the local state's
 *       LRU bound: a session silent that long is forgotten.</li>
 *   <li>{@value #WORKERS_MAP}: one entry per partition holding the in-flight and assigned counts
 *       per decode worker and the round-robin cursors.</li>
 * </ul>
 * Every mutation is an entry processor sent with {@code submitToKey}: the key's owner applies the
 * operations on a key one at a time (and runs the same processor on the backup), so each call is
 * atomic per session key and per partition key, whichever node sends it. {@link #admitted} and
 * {@link #fallback} touch both maps, each atomically; {@link #snapshot} reads both with two async
 * gets (each a consistent copy of its entry, as the seam requires: the dispatcher never assumes
 * the two reads are one instant).
 *
 * <p>Every operation is asynchronous; the whole-map {@link #removeWorker} runs on the
 * {@code blocking} executor (a worker thread), never on an event loop. Stages complete on
 * {@code completions} (the node's event loops), never on Hazelcast's own threads.
 *
 * <p>Serialization: values and entry processors are plain {@link Serializable} records (every
 * member runs the same jar); each is a few hundred bytes.
 *
 * <p>Threading: holds no mutable state of its own; safe from any thread.
 */
public final class HazelcastKvcState implements KvcState {

  /** Per-session pin, rejects and turns. */
  public static final String SESSIONS_MAP = "kvselect.kvc.sessions";

  /** Per-partition in-flight and assigned counts and round-robin cursors. */
  public static final String WORKERS_MAP = "kvselect.kvc.workers";

  /** How long a session's state outlives its last dispatch by default. */
  public static final Duration DEFAULT_SESSION_IDLE = Duration.ofHours(1);

  /** A decode worker rank as stored. */
  record Rank(long workerId, int dpRank) implements Serializable {
    static Rank of(WorkerRank r) {
      return new Rank(r.workerId(), r.dpRank());
    }

    WorkerRank rank() {
      return new WorkerRank(workerId, dpRank);
    }
  }

  /** A session's state: pin (null when none), rejects per worker since its last success there, turns. */
  record Session(Rank pin, HashMap<Rank, Integer> rejects, int turns) implements Serializable {
    static final Session EMPTY = new Session(null, new HashMap<>(), 0);
  }

  /** A partition's counters. */
  record Counters(
      HashMap<Rank, Long> inflight, HashMap<Rank, Long> assigned, HashMap<String, Long> cursors)
      implements Serializable {
    static Counters empty() {
      return new Counters(new HashMap<>(), new HashMap<>(), new HashMap<>());
    }

    Counters copy() {
      return new Counters(new HashMap<>(inflight), new HashMap<>(assigned), new HashMap<>(cursors));
    }
  }

  private final IMap<String, Session> sessions;
  private final IMap<String, Counters> workers;
  private final long sessionIdleMillis;
  private final Executor blocking;
  private final Executor completions;

  /** With {@link #DEFAULT_SESSION_IDLE}. */
  public HazelcastKvcState(HazelcastInstance hazelcast, Executor blocking, Executor completions) {
    this(hazelcast, DEFAULT_SESSION_IDLE, blocking, completions);
  }

  /**
   * @param sessionIdle how long a session's state outlives its last write; positive
   * @param blocking runs the whole-map operations (a worker pool)
   * @param completions where returned stages complete (the event loops)
   */
  public HazelcastKvcState(
      HazelcastInstance hazelcast, Duration sessionIdle, Executor blocking, Executor completions) {
    if (sessionIdle == null || sessionIdle.isNegative() || sessionIdle.isZero()) {
      throw new IllegalArgumentException("session idle time must be positive: " + sessionIdle);
    }
    this.sessions = hazelcast.getMap(SESSIONS_MAP);
    this.workers = hazelcast.getMap(WORKERS_MAP);
    this.sessionIdleMillis = sessionIdle.toMillis();
    this.blocking = Objects.requireNonNull(blocking, "blocking");
    this.completions = Objects.requireNonNull(completions, "completions");
  }

  /** The session key: the partition's length first, so no partition/session pair collides with another. */
  static String key(String partition, String sessionId) {
    return io.kvselect.core.kvc.BudgetedKvcState.key(partition, sessionId);
  }

  @Override
  public CompletionStage<KvcSnapshot> snapshot(String partition, String sessionId) {
    try {
      // each read handed over first: a stage combined on Hazelcast's futures would run on its
      // default executor (ClusterStages)
      CompletionStage<Session> s = hop(sessions.getAsync(key(partition, sessionId)));
      CompletionStage<Counters> c = hop(workers.getAsync(partition));
      return s.thenCombine(c, HazelcastKvcState::toSnapshot);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static KvcSnapshot toSnapshot(Session s, Counters c) {
    if (s == null && c == null) {
      return KvcSnapshot.EMPTY;
    }
    Map<WorkerRank, Integer> rejects = new HashMap<>();
    if (s != null) {
      s.rejects().forEach((r, n) -> rejects.put(r.rank(), n));
    }
    Map<WorkerRank, Long> inflight = new HashMap<>();
    Map<WorkerRank, Long> assigned = new HashMap<>();
    if (c != null) {
      c.inflight().forEach((r, n) -> inflight.put(r.rank(), n));
      c.assigned().forEach((r, n) -> assigned.put(r.rank(), n));
    }
    return new KvcSnapshot(
        s == null || s.pin() == null ? null : s.pin().rank(),
        rejects,
        inflight,
        assigned,
        s == null ? 0 : s.turns());
  }

  @Override
  public CompletionStage<Void> rejected(String partition, String sessionId, WorkerRank d) {
    return session(partition, sessionId, new Rejected(Rank.of(d), sessionIdleMillis))
        .thenApply(x -> null);
  }

  @Override
  public CompletionStage<WorkerRank> admitted(
      String partition, String sessionId, WorkerRank d, ResetScope scope) {
    CompletionStage<Rank> before =
        session(
            partition,
            sessionId,
            new Admitted(Rank.of(d), Objects.requireNonNull(scope, "scope"), sessionIdleMillis));
    CompletionStage<Long> counted = counters(partition, new Dispatched(Rank.of(d)));
    return before.thenCombine(counted, (prev, x) -> prev == null ? null : prev.rank());
  }

  @Override
  public CompletionStage<Void> fallback(String partition, String sessionId, WorkerRank d) {
    CompletionStage<Rank> turned = session(partition, sessionId, new Turned(sessionIdleMillis));
    CompletionStage<Long> counted = counters(partition, new Dispatched(Rank.of(d)));
    return turned.thenCombine(counted, (a, b) -> null);
  }

  @Override
  public CompletionStage<Void> finished(String partition, WorkerRank d) {
    return counters(partition, new Finished(Rank.of(d))).thenApply(x -> null);
  }

  @Override
  public CompletionStage<Long> nextRoundRobin(String partition, String pool) {
    return counters(partition, new NextCursor(pool));
  }

  @Override
  public CompletionStage<Long> peekRoundRobin(String partition, String pool) {
    try {
      return hop(workers.getAsync(partition))
          .thenApply(c -> c == null ? 0L : c.cursors().getOrDefault(pool, 0L));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Void> removeWorker(long workerId) {
    return onBlocking(
        () -> {
          sessions.executeOnEntries(new ForgetWorkerInSession(workerId, sessionIdleMillis));
          workers.executeOnEntries(new ForgetWorkerInCounters(workerId));
          return null;
        });
  }

  /** Sessions whose primary copy this member holds (a local view, no remote call). */
  @Override
  public int sessions() {
    return (int) sessions.getLocalMapStats().getOwnedEntryCount();
  }

  private <R> CompletionStage<R> session(
      String partition, String sessionId, EntryProcessor<String, Session, R> op) {
    try {
      return hop(
          sessions.submitToKey(
              key(
                  Objects.requireNonNull(partition, "partition"),
                  Objects.requireNonNull(sessionId, "sessionId")),
              op));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private <R> CompletionStage<R> counters(
      String partition, EntryProcessor<String, Counters, R> op) {
    try {
      return hop(workers.submitToKey(Objects.requireNonNull(partition, "partition"), op));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private <T> CompletionStage<T> hop(CompletionStage<T> stage) {
    return ClusterStages.hop(stage, completions);
  }

  private <T> CompletionStage<T> onBlocking(Callable<T> body) {
    return ClusterStages.onBlocking(body, blocking, completions);
  }

  /** Writes a session entry with its idle TTL restarted (where the entry supports a TTL). */
  static void store(Map.Entry<String, Session> entry, Session s, long idleMillis) {
    if (entry instanceof ExtendedMapEntry<String, Session> e) {
      e.setValue(s, idleMillis, TimeUnit.MILLISECONDS);
    } else {
      entry.setValue(s);
    }
  }

  private static Session current(Map.Entry<String, Session> entry) {
    return entry.getValue() == null ? Session.EMPTY : entry.getValue();
  }

  /** {@code rejects[s, d]++}; returns the new count. */
  record Rejected(Rank d, long idleMillis) implements EntryProcessor<String, Session, Integer> {
    @Override
    public Integer process(Map.Entry<String, Session> entry) {
      Session s = current(entry);
      HashMap<Rank, Integer> rejects = new HashMap<>(s.rejects());
      int n = rejects.merge(d, 1, Integer::sum);
      store(entry, new Session(s.pin(), rejects, s.turns()), idleMillis);
      return n;
    }
  }

  /** Reset-on-success per {@code scope}, {@code pin[s] = d}, one more turn; returns the previous pin. */
  record Admitted(Rank d, ResetScope scope, long idleMillis)
      implements EntryProcessor<String, Session, Rank> {
    @Override
    public Rank process(Map.Entry<String, Session> entry) {
      Session s = current(entry);
      HashMap<Rank, Integer> rejects = new HashMap<>(s.rejects());
      switch (scope) {
        case WINNER -> rejects.remove(d);
        case ALL -> rejects.clear();
        case NONE -> {}
      }
      store(entry, new Session(d, rejects, s.turns() + 1), idleMillis);
      return s.pin();
    }
  }

  /** One more turn, pin unchanged (a Fallback). */
  record Turned(long idleMillis) implements EntryProcessor<String, Session, Rank> {
    @Override
    public Rank process(Map.Entry<String, Session> entry) {
      Session s = current(entry);
      store(entry, new Session(s.pin(), new HashMap<>(s.rejects()), s.turns() + 1), idleMillis);
      return s.pin();
    }
  }

  /** Drops every pin and counter naming a rank of {@code workerId}. */
  record ForgetWorkerInSession(long workerId, long idleMillis)
      implements EntryProcessor<String, Session, Boolean> {
    @Override
    public Boolean process(Map.Entry<String, Session> entry) {
      Session s = entry.getValue();
      if (s == null) {
        return false;
      }
      HashMap<Rank, Integer> rejects = new HashMap<>(s.rejects());
      boolean changed = rejects.keySet().removeIf(r -> r.workerId() == workerId);
      Rank pin = s.pin();
      if (pin != null && pin.workerId() == workerId) {
        pin = null;
        changed = true;
      }
      if (changed) {
        store(entry, new Session(pin, rejects, s.turns()), idleMillis);
      }
      return changed;
    }
  }

  /** {@code inflight[d]++}, {@code assigned[d]++}; returns the new in-flight count. */
  record Dispatched(Rank d) implements EntryProcessor<String, Counters, Long> {
    @Override
    public Long process(Map.Entry<String, Counters> entry) {
      Counters c = entry.getValue() == null ? Counters.empty() : entry.getValue().copy();
      long n = c.inflight().merge(d, 1L, Long::sum);
      c.assigned().merge(d, 1L, Long::sum);
      entry.setValue(c);
      return n;
    }
  }

  /** {@code inflight[d]--}, never below 0 (an absent count is 0). */
  record Finished(Rank d) implements EntryProcessor<String, Counters, Long> {
    @Override
    public Long process(Map.Entry<String, Counters> entry) {
      if (entry.getValue() == null || !entry.getValue().inflight().containsKey(d)) {
        return 0L;
      }
      Counters c = entry.getValue().copy();
      Long n = c.inflight().computeIfPresent(d, (k, v) -> v <= 1 ? null : v - 1);
      entry.setValue(c);
      return n == null ? 0L : n;
    }
  }

  /** The next value (0, 1, 2, ...) of cursor {@code pool}. */
  record NextCursor(String pool) implements EntryProcessor<String, Counters, Long> {
    @Override
    public Long process(Map.Entry<String, Counters> entry) {
      Counters c = entry.getValue() == null ? Counters.empty() : entry.getValue().copy();
      long v = c.cursors().merge(pool, 1L, Long::sum) - 1;
      entry.setValue(c);
      return v;
    }
  }

  /** Drops the counts naming a rank of {@code workerId}. */
  record ForgetWorkerInCounters(long workerId)
      implements EntryProcessor<String, Counters, Boolean> {
    @Override
    public Boolean process(Map.Entry<String, Counters> entry) {
      if (entry.getValue() == null) {
        return false;
      }
      Counters c = entry.getValue().copy();
      boolean changed = c.inflight().keySet().removeIf(r -> r.workerId() == workerId);
      changed |= c.assigned().keySet().removeIf(r -> r.workerId() == workerId);
      if (changed) {
        entry.setValue(c);
      }
      return changed;
    }
  }
}
