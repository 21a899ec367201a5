package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@link KvcState} held in this process. Sessions of a partition are kept in access order and the
 * least recently used one is dropped past {@code maxSessionsPerPartition} (its pin and rejects
 * are forgotten, as when a session goes idle for good).
 *
 * <p>Threading: owns all its maps; every operation synchronizes on this instance (a leaf lock,
 * short and never calling out); every returned stage is already complete. A cluster-wide
 * implementation plugs in through the {@link KvcState} interface.
 */
public final class LocalKvcState implements KvcState {

  private static final class SessionRec {
    WorkerRank pin;
    int turns;
    final Map<WorkerRank, Integer> rejects = new HashMap<>(4);
  }

  private static final class PartitionRec {
    final LinkedHashMap<String, SessionRec> sessions = new LinkedHashMap<>(64, 0.75f, true);
    final Map<WorkerRank, Long> inflight = new HashMap<>();
    final Map<WorkerRank, Long> assigned = new HashMap<>();
    final Map<String, Long> cursors = new HashMap<>();
  }

  private final int maxSessionsPerPartition;
  private final Map<String, PartitionRec> partitions = new HashMap<>();

  public LocalKvcState() {
    this(65_536);
  }

  public LocalKvcState(int maxSessionsPerPartition) {
    if (maxSessionsPerPartition < 1) {
      throw new IllegalArgumentException("maxSessionsPerPartition must be >= 1");
    }
    this.maxSessionsPerPartition = maxSessionsPerPartition;
  }

  private PartitionRec part(String partition) {
    return partitions.computeIfAbsent(partition, k -> new PartitionRec());
  }

  private SessionRec session(PartitionRec p, String sessionId) {
    SessionRec s = p.sessions.get(sessionId);
    if (s == null) {
      s = new SessionRec();
      p.sessions.put(sessionId, s);
      if (p.sessions.size() > maxSessionsPerPartition) {
        Iterator<String> it = p.sessions.keySet().iterator();
        it.next();
        it.remove();
      }
    }
    return s;
  }

  @Override
  public synchronized CompletionStage<KvcSnapshot> snapshot(String partition, String sessionId) {
    PartitionRec p = partitions.get(partition);
    if (p == null) {
      return CompletableFuture.completedFuture(KvcSnapshot.EMPTY);
    }
    SessionRec s = p.sessions.get(sessionId);
    return CompletableFuture.completedFuture(
        new KvcSnapshot(
            s == null ? null : s.pin,
            s == null ? Map.of() : s.rejects,
            p.inflight,
            p.assigned,
            s == null ? 0 : s.turns));
  }

  @Override
  public synchronized CompletionStage<Void> rejected(
      String partition, String sessionId, WorkerRank d) {
    session(part(partition), sessionId).rejects.merge(d, 1, Integer::sum);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized CompletionStage<WorkerRank> admitted(
      String partition, String sessionId, WorkerRank d, ResetScope scope) {
    PartitionRec p = part(partition);
    SessionRec s = session(p, sessionId);
    switch (scope) {
      case WINNER -> s.rejects.remove(d);
      case ALL -> s.rejects.clear();
      case NONE -> {}
    }
    WorkerRank before = s.pin;
    s.pin = d;
    s.turns++;
    p.inflight.merge(d, 1L, Long::sum);
    p.assigned.merge(d, 1L, Long::sum);
    return CompletableFuture.completedFuture(before);
  }

  @Override
  public synchronized CompletionStage<Void> fallback(
      String partition, String sessionId, WorkerRank d) {
    PartitionRec p = part(partition);
    session(p, sessionId).turns++;
    p.inflight.merge(d, 1L, Long::sum);
    p.assigned.merge(d, 1L, Long::sum);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized CompletionStage<Void> finished(String partition, WorkerRank d) {
    PartitionRec p = partitions.get(partition);
    if (p != null) {
      p.inflight.computeIfPresent(d, (k, v) -> v <= 1 ? null : v - 1);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized CompletionStage<Long> nextRoundRobin(String partition, String pool) {
    long v = part(partition).cursors.merge(pool, 1L, Long::sum) - 1;
    return CompletableFuture.completedFuture(v);
  }

  @Override
  public synchronized CompletionStage<Long> peekRoundRobin(String partition, String pool) {
    PartitionRec p = partitions.get(partition);
    return CompletableFuture.completedFuture(p == null ? 0L : p.cursors.getOrDefault(pool, 0L));
  }

  @Override
  public synchronized CompletionStage<Void> removeWorker(long workerId) {
    for (PartitionRec p : partitions.values()) {
      p.inflight.keySet().removeIf(r -> r.workerId() == workerId);
      p.assigned.keySet().removeIf(r -> r.workerId() == workerId);
      for (SessionRec s : p.sessions.values()) {
        s.rejects.keySet().removeIf(r -> r.workerId() == workerId);
        if (s.pin != null && s.pin.workerId() == workerId) {
          s.pin = null;
        }
      }
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized int sessions() {
    int n = 0;
    for (PartitionRec p : partitions.values()) {
      n += p.sessions.size();
    }
    return n;
  }
}
