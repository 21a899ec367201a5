package io.kvselect.core.service;

import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.Schedulability;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The worker catalog and its partitions. A worker id is service-wide: re-registering it in
 * another partition drains it from the old one first. Owned by the {@link SelectionService} lock.
 */
final class WorkerRegistry {

  private final ServiceSettings settings;
  private final Clock clock;
  private final TreeMap<Long, WorkerRecord> workers = new TreeMap<>(Long::compareUnsigned);
  private final TreeMap<PartitionKey, Partition> partitions = new TreeMap<>();
  private final List<CatalogListener> listeners = new ArrayList<>();

  WorkerRegistry(ServiceSettings settings, Clock clock) {
    this.settings = settings;
    this.clock = clock;
  }

  void addListener(CatalogListener l) {
    listeners.add(l);
  }

  Partition partition(PartitionKey key) {
    return partitions.get(key);
  }

  Iterable<Partition> partitions() {
    return partitions.values();
  }

  /**
   * The partition {@code key}, created with {@code blockSize} if it does not exist yet (index
   * recovery from a peer's dump arrives before the workers are registered); null if it exists
   * with another block size.
   */
  Partition ensurePartition(PartitionKey key, int blockSize) {
    Partition p = partitions.computeIfAbsent(key, k -> new Partition(k, settings, clock));
    if (p.blockSize == null) {
      p.blockSize = blockSize;
    }
    return p.blockSize == blockSize ? p : null;
  }

  WorkerRecord worker(long id) {
    return workers.get(id);
  }

  List<WorkerRecord> list(String model, String group) {
    List<WorkerRecord> out = new ArrayList<>();
    for (WorkerRecord w : workers.values()) {
      if ((model == null || model.equals(w.spec().modelName()))
          && (group == null || group.equals(w.spec().routingGroup()))) {
        out.add(w);
      }
    }
    return out;
  }

  int schedulableCount() {
    int n = 0;
    for (WorkerRecord w : workers.values()) {
      n += w.schedulable() ? 1 : 0;
    }
    return n;
  }

  List<WorkerRecord> all() {
    return new ArrayList<>(workers.values());
  }

  /**
   * Inserts or replaces a worker. Ranks the new record no longer has (or all ranks, when it moves
   * partition or stops being schedulable) are dropped from index and load; {@code freed} receives
   * the ids of reservations that were dropped with them.
   */
  WorkerRecord upsert(WorkerSpec spec, Consumer<String> freed) {
    WorkerRecord previous = workers.get(spec.workerId());
    if (previous != null && !previous.spec().partition().equals(spec.partition())) {
      detach(previous, freed);
      previous = null;
    }
    Partition p = partitions.computeIfAbsent(spec.partition(), k -> new Partition(k, settings, clock));
    Integer bs = p.blockSize;
    Boolean eagle = p.eagle;
    if (previous != null && onlySchedulableMember(p, spec.workerId())) {
      bs = null;
      eagle = null;
    }
    List<String> reasons = Schedulability.reasons(spec, settings.router(), bs, eagle);
    WorkerRecord record = new WorkerRecord(spec,
        reasons.isEmpty() ? Lifecycle.SCHEDULABLE : Lifecycle.INCOMPLETE, reasons);
    if (previous != null) {
      Set<WorkerRank> keep = record.schedulable() ? new HashSet<>(record.ranks()) : Set.of();
      boolean sizeChanged = bs == null && p.blockSize != null && !p.blockSize.equals(spec.blockSize());
      for (WorkerRank r : previous.ranks()) {
        if (sizeChanged || !keep.contains(r)) {
          p.dropRank(r).forEach(freed);
        }
      }
    }
    workers.put(spec.workerId(), record);
    p.workers.put(spec.workerId(), record);
    p.refresh();
    for (CatalogListener l : listeners) {
      l.workerUpserted(previous, record);
    }
    return record;
  }

  private static boolean onlySchedulableMember(Partition p, long workerId) {
    for (WorkerRecord w : p.workers.values()) {
      if (w.schedulable() && w.workerId() != workerId) {
        return false;
      }
    }
    return true;
  }

  /** Removes a worker; returns its last record with lifecycle {@code unschedulable}. */
  WorkerRecord remove(long workerId, Consumer<String> freed) {
    WorkerRecord previous = workers.get(workerId);
    if (previous == null) {
      throw SelectionException.notFound("worker " + Long.toUnsignedString(workerId) + " not found");
    }
    detach(previous, freed);
    return previous.withLifecycle(Lifecycle.UNSCHEDULABLE);
  }

  private void detach(WorkerRecord w, Consumer<String> freed) {
    workers.remove(w.workerId());
    Partition p = partitions.get(w.spec().partition());
    if (p != null) {
      p.workers.remove(w.workerId());
      p.primary.clearWorker(w.workerId());
      for (WorkerRank r : w.ranks()) {
        p.dropRank(r).forEach(freed);
      }
      p.refresh();
      if (p.workers.isEmpty() && p.load.ranks().isEmpty()) {
        partitions.remove(p.key);
      }
    }
    for (CatalogListener l : listeners) {
      l.workerRemoved(w);
    }
  }
}
