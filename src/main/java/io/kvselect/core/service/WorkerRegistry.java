package io.kvselect.core.service;

import io.kvselect.core.catalog.CatalogListener;
import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.CatalogVersion;
import io.kvselect.core.catalog.CatalogVersions;
import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.Schedulability;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.queue.QueueConfig;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

/**
 * The worker catalog and its partitions. A worker id is service-wide: re-registering it in
 * another partition drains it from the old one first.
 *
 * <p>Ownership: one catalog writer at a time. {@link #upsert}, {@link #remove} and
 * {@link #ensurePartition} hold this registry's monitor (the catalog lock) and, while they change
 * a partition, that partition's lock (lock order: catalog, then partition; nothing takes them the
 * other way round). The maps are concurrent, so readers ({@link #partition}, {@link #worker},
 * {@link #list}) never lock; a reader sees each record change whole.
 *
 * <p>Rollback: validation ({@link Schedulability}) runs before anything changes. Listeners must
 * not fail; if one does anyway, the registry restores the previous registration (or removes the
 * new worker) and rethrows, so a request applies whole or not at all as far as the catalog goes.
 */
final class WorkerRegistry {

  private final ServiceSettings settings;
  private final Clock clock;
  private final ConcurrentSkipListMap<Long, WorkerRecord> workers =
      new ConcurrentSkipListMap<>(Long::compareUnsigned);
  private final ConcurrentSkipListMap<PartitionKey, Partition> partitions =
      new ConcurrentSkipListMap<>();
  private final List<CatalogListener> listeners = new CopyOnWriteArrayList<>();

  /**
   * Workers made unschedulable because their engine is unreachable, with the reason. Written by
   * the catalog writer (under the catalog lock); a registration or removal of the worker clears it.
   */
  private final java.util.Map<Long, String> unreachable =
      new java.util.concurrent.ConcurrentHashMap<>();

  private final QueueConfig queueConfig;

  /** The entries' versions and remembered removals: written under the catalog lock. */
  private final CatalogVersions versions = new CatalogVersions(TOMBSTONE_TTL_MS, TOMBSTONE_LIMIT);

  /** How long a removal is remembered against late, older upserts of the worker. */
  static final long TOMBSTONE_TTL_MS = 600_000;

  static final int TOMBSTONE_LIMIT = 100_000;

  /** A local catalog change: the new record and the change to publish (with its version). */
  record Applied(WorkerRecord record, CatalogSync.CatalogChange change) {}

  WorkerRegistry(ServiceSettings settings, Clock clock, QueueConfig queueConfig) {
    this.settings = settings;
    this.clock = clock;
    this.queueConfig = queueConfig;
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
  synchronized Partition ensurePartition(PartitionKey key, int blockSize) {
    Partition p =
        partitions.computeIfAbsent(key, k -> new Partition(k, settings, clock, queueConfig));
    p.adoptBlockSize(blockSize);
    return p.members().blockSize() == blockSize ? p : null;
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
   * (partition, request id) of every reservation dropped with them, while the partition's lock is
   * held.
   */
  synchronized WorkerRecord upsert(WorkerSpec spec, BiConsumer<Partition, String> freed) {
    unreachable.remove(spec.workerId());
    WorkerRecord previous = workers.get(spec.workerId());
    WorkerRecord record = apply(spec, freed);
    try {
      for (CatalogListener l : listeners) {
        l.workerUpserted(
            previous != null && previous.spec().partition().equals(spec.partition())
                ? previous
                : null,
            record);
      }
    } catch (RuntimeException e) {
      if (previous == null) {
        detach(record, freed, true);
      } else {
        WorkerRecord restored = apply(previous.spec(), freed);
        for (CatalogListener l : listeners) {
          try {
            l.workerUpserted(record, restored);
          } catch (RuntimeException ignored) {
            // the original failure is the one to report
          }
        }
      }
      throw e;
    }
    return record;
  }

  /** The catalog and partition changes of an upsert, without listeners. */
  private WorkerRecord apply(WorkerSpec spec, BiConsumer<Partition, String> freed) {
    WorkerRecord previous = workers.get(spec.workerId());
    if (previous != null && !previous.spec().partition().equals(spec.partition())) {
      detach(previous, freed, true);
      previous = null;
    }
    Partition p =
        partitions.computeIfAbsent(
            spec.partition(), k -> new Partition(k, settings, clock, queueConfig));
    Partition.Members m = p.members();
    Integer bs = m.blockSize();
    Boolean eagle = m.eagle();
    if (previous != null && onlySchedulableMember(p, spec.workerId())) {
      bs = null;
      eagle = null;
    }
    List<String> reasons = Schedulability.reasons(spec, settings.router(), bs, eagle);
    WorkerRecord record =
        new WorkerRecord(
            spec, reasons.isEmpty() ? Lifecycle.SCHEDULABLE : Lifecycle.INCOMPLETE, reasons);
    synchronized (p.lock) {
      if (previous != null) {
        Set<WorkerRank> keep = record.schedulable() ? new HashSet<>(record.ranks()) : Set.of();
        boolean sizeChanged =
            bs == null && m.blockSize() != null && !m.blockSize().equals(spec.blockSize());
        for (WorkerRank r : previous.ranks()) {
          if (sizeChanged || !keep.contains(r)) {
            for (String id : p.dropRank(r)) {
              freed.accept(p, id);
            }
          }
        }
      }
      workers.put(spec.workerId(), record);
      p.workers.put(spec.workerId(), record);
      p.refresh();
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

  /**
   * Applies {@code patch} to the current registration of {@code workerId} and upserts the result
   * in the same partition, all under the catalog lock (concurrent patches compose).
   */
  synchronized WorkerRecord patch(
      long workerId,
      java.util.function.UnaryOperator<WorkerSpec> patch,
      BiConsumer<Partition, String> freed) {
    WorkerRecord current = workers.get(workerId);
    if (current == null) {
      throw SelectionException.notFound("worker " + Long.toUnsignedString(workerId) + " not found");
    }
    WorkerSpec next = patch.apply(current.spec());
    return upsert(
        next.withPartition(current.spec().modelName(), current.spec().routingGroup()), freed);
  }

  /** Removes a worker; returns its last record with lifecycle {@code unschedulable}. */
  synchronized WorkerRecord remove(long workerId, BiConsumer<Partition, String> freed) {
    WorkerRecord previous = workers.get(workerId);
    if (previous == null) {
      throw SelectionException.notFound("worker " + Long.toUnsignedString(workerId) + " not found");
    }
    detach(previous, freed, true);
    return previous.withLifecycle(Lifecycle.UNSCHEDULABLE);
  }

  private void detach(WorkerRecord w, BiConsumer<Partition, String> freed, boolean notify) {
    workers.remove(w.workerId());
    unreachable.remove(w.workerId());
    Partition p = partitions.get(w.spec().partition());
    if (p != null) {
      synchronized (p.lock) {
        p.workers.remove(w.workerId());
        p.primary.clearWorker(w.workerId());
        for (WorkerRank r : w.ranks()) {
          for (String id : p.dropRank(r)) {
            freed.accept(p, id);
          }
        }
        p.refresh();
        if (p.workers.isEmpty() && p.load.ranks().isEmpty()) {
          partitions.remove(p.key);
        }
      }
    }
    if (notify) {
      for (CatalogListener l : listeners) {
        l.workerRemoved(w);
      }
    }
  }

  // ---- versioned changes: local ones are stamped, a peer's applies only when newer ----

  /** {@link #upsert} made here: stamps a new version. */
  synchronized Applied upsertLocal(WorkerSpec spec, BiConsumer<Partition, String> freed) {
    WorkerRecord r = upsert(spec, freed);
    return new Applied(r, stampUpsert(r.spec()));
  }

  /** {@link #patch} made here: stamps a new version. */
  synchronized Applied patchLocal(
      long workerId,
      java.util.function.UnaryOperator<WorkerSpec> patch,
      BiConsumer<Partition, String> freed) {
    WorkerRecord r = patch(workerId, patch, freed);
    return new Applied(r, stampUpsert(r.spec()));
  }

  /** {@link #remove} made here: stamps a new version and remembers the removal. */
  synchronized Applied removeLocal(long workerId, BiConsumer<Partition, String> freed) {
    WorkerRecord r = remove(workerId, freed);
    long now = clock.millis();
    CatalogVersion v = new CatalogVersion(versions.nextStamp(now), CatalogVersion.REMOVAL_TIE);
    versions.removed(workerId, v, now);
    return new Applied(r, new CatalogSync.CatalogChange.Removed(workerId, v));
  }

  private CatalogSync.CatalogChange stampUpsert(WorkerSpec spec) {
    long now = clock.millis();
    CatalogVersion v = new CatalogVersion(versions.nextStamp(now), CatalogVersion.upsertTie(spec));
    versions.upserted(spec.workerId(), v, now);
    return new CatalogSync.CatalogChange.Upserted(spec, v);
  }

  /**
   * A peer's change: applied when its version is newer than what this node holds for the worker
   * (live or remembered removal), ignored otherwise. An upsert of the spec already registered, or
   * the removal of a worker not registered, only records the version. Returns whether the catalog
   * changed; a refused spec throws and records nothing.
   */
  synchronized boolean applyPeer(
      CatalogSync.CatalogChange change, BiConsumer<Partition, String> freed) {
    long id = change.workerId();
    if (!versions.accepts(id, change.version())) {
      return false;
    }
    long now = clock.millis();
    boolean changed;
    if (change instanceof CatalogSync.CatalogChange.Upserted u) {
      WorkerRecord current = workers.get(id);
      changed = current == null || !current.spec().equals(u.spec());
      if (changed) {
        upsert(u.spec(), freed);
      }
      versions.upserted(id, change.version(), now);
    } else {
      changed = workers.containsKey(id);
      if (changed) {
        remove(id, freed);
      }
      versions.removed(id, change.version(), now);
    }
    return changed;
  }

  /** An order-independent hash of the registered workers and their versions ({@link CatalogVersions#digest}). */
  synchronized long catalogDigest() {
    return versions.digest();
  }

  /**
   * The whole catalog as changes a peer can apply: an upsert per registered worker at its version
   * ({@link CatalogVersion#ZERO} when it has none) and a removal per remembered one.
   */
  synchronized List<CatalogSync.CatalogChange> catalogState() {
    List<CatalogSync.CatalogChange> out = new ArrayList<>();
    for (WorkerRecord w : workers.values()) {
      CatalogVersion v = versions.current(w.workerId());
      out.add(
          new CatalogSync.CatalogChange.Upserted(w.spec(), v == null ? CatalogVersion.ZERO : v));
    }
    for (var t : versions.tombstones(clock.millis())) {
      out.add(new CatalogSync.CatalogChange.Removed(t.getKey(), t.getValue()));
    }
    return out;
  }

  /** The reason a worker was made unschedulable as unreachable, or null. */
  String unreachableReason(long workerId) {
    return unreachable.get(workerId);
  }

  /**
   * Liveness: with a {@code reason}, a schedulable worker becomes {@link Lifecycle#UNSCHEDULABLE}
   * with that reason; its ranks leave the candidate pool but keep their index entries, load rows
   * and event listeners (listeners are not told, so the engine's return is still seen). With a
   * null {@code reason}, a worker marked so is registered again with its own spec, which makes it
   * schedulable when its registration allows. Anything else changes nothing. Returns the current
   * record, or null when the worker is unknown.
   */
  synchronized WorkerRecord setUnreachable(
      long workerId, String reason, BiConsumer<Partition, String> freed) {
    WorkerRecord cur = workers.get(workerId);
    if (cur == null) {
      return null;
    }
    String marked = unreachable.get(workerId);
    if (reason == null) {
      return marked == null ? cur : upsert(cur.spec(), freed);
    }
    if (reason.equals(marked) || (marked == null && !cur.schedulable())) {
      return cur;
    }
    unreachable.put(workerId, reason);
    WorkerRecord record = new WorkerRecord(cur.spec(), Lifecycle.UNSCHEDULABLE, List.of(reason));
    Partition p = partitions.get(cur.spec().partition());
    synchronized (p.lock) {
      workers.put(workerId, record);
      p.workers.put(workerId, record);
      p.refresh();
    }
    return record;
  }
}
