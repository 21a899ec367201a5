package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapMerge;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.TtlBlockIndex;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.ActiveLoad;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.core.queue.QueuedRequest;
import io.kvselect.core.queue.RouterQueue;
import io.kvselect.core.select.CandidatePool;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The state of one routing partition, (model_name, routing_group): its members, indexes and
 * active load. Partitions never wait on each other: each has its own {@link #lock}.
 *
 * <p>Ownership:
 * <ul>
 *   <li>{@link #load}, {@link #approximate}, {@link #predicted}, {@link #queue} and
 *       {@link #waiters} (plain single-threaded
 *       structures) are owned by {@link #lock}: every read and write holds it. Critical sections
 *       are in-memory, bounded by the request and the partition's ranks, and never call out.
 *   <li>{@link #primary} in event mode is a thread-safe {@code ShardedBlockIndex} (each shard
 *       written by its KV-event owner thread, read under the shard's read lock); it is read
 *       without {@link #lock}. In approximate mode it is {@link #approximate}, owned by the lock.
 *   <li>{@link #workers} is written only by the catalog writer (who holds the service's catalog
 *       lock and this lock); {@link #members()} is an immutable snapshot of it, republished after
 *       every change and read by anyone without a lock.
 * </ul>
 */
final class Partition {

  /** An immutable view of the partition's membership, republished on every catalog change. */
  record Members(CandidatePool pool, Integer blockSize, Boolean eagle) {

    WorkerRecord schedulableWorker(long workerId) {
      return pool.worker(workerId);
    }

    boolean ready() {
      return !pool.ranks().isEmpty();
    }
  }

  final PartitionKey key;
  final Object lock = new Object();
  final BlockIndex primary;
  final TtlBlockIndex approximate;
  final TtlBlockIndex predicted;
  final ActiveLoad load;

  /** Every member (schedulable or not), by unsigned id. Catalog writer only. */
  final TreeMap<Long, WorkerRecord> workers = new TreeMap<>(Long::compareUnsigned);

  /** Requests waiting for capacity, in policy order, and how each resumes. Owned by {@link #lock}. */
  final RouterQueue queue;

  final Map<QueuedRequest, RouterQueueing.Waiter> waiters = new HashMap<>();

  /** A continuation of this queue's drain is scheduled ({@link RouterQueueing}). Owned by {@link #lock}. */
  boolean drainScheduled;

  private volatile Members members;

  Partition(PartitionKey key, ServiceSettings s, Clock clock, QueueConfig queueConfig) {
    this.key = key;
    this.queue = new RouterQueue(queueConfig);
    var cfg = s.router();
    if (cfg.index().useKvEvents()) {
      this.approximate = null;
      this.primary = s.eventIndexFactory().get();
      this.predicted =
          cfg.index().predictedTtlSecs() == null
              ? null
              : new TtlBlockIndex(seconds(cfg.index().predictedTtlSecs()), clock);
    } else {
      this.approximate = new TtlBlockIndex(seconds(cfg.index().ttlSecs()), clock);
      this.primary = approximate;
      this.predicted = null;
    }
    this.load = new ActiveLoad(clock, seconds(cfg.load().activeRequestExpirySecs()));
    this.members = new Members(new CandidatePool(key, List.of(), Map.of()), null, null);
  }

  private static Duration seconds(double s) {
    return Duration.ofNanos((long) (s * 1_000_000_000L));
  }

  Members members() {
    return members;
  }

  /** The schedulable record of {@code workerId} in the current membership, or null. */
  WorkerRecord schedulableWorker(long workerId) {
    return members.schedulableWorker(workerId);
  }

  /**
   * Republishes {@link #members()} after the catalog writer changed {@link #workers}, and adds a
   * load row for every schedulable rank. Caller holds the catalog lock and {@link #lock}.
   */
  void refresh() {
    List<WorkerRank> ranks = new ArrayList<>();
    Map<Long, WorkerRecord> schedulable = new HashMap<>();
    Integer bs = null;
    Boolean eg = null;
    for (WorkerRecord w : workers.values()) {
      if (w.schedulable()) {
        ranks.addAll(w.ranks());
        schedulable.put(w.workerId(), w);
        bs = w.spec().blockSize();
        eg = w.spec().isEagle();
      }
    }
    Collections.sort(ranks);
    for (WorkerRank r : ranks) {
      load.addRank(r);
    }
    Members old = members;
    if (bs == null && !workers.isEmpty()) {
      bs = old.blockSize();
      eg = old.eagle();
    }
    members = new Members(new CandidatePool(key, ranks, schedulable), bs, eg);
  }

  /**
   * Sets the block size of a partition that has none yet (index recovery creates partitions
   * before their workers register). Caller holds the catalog lock.
   */
  void adoptBlockSize(int blockSize) {
    Members m = members;
    if (m.blockSize() == null) {
      members = new Members(m.pool(), blockSize, m.eagle());
    }
  }

  /** The event-driven part of a query's overlap, read without {@link #lock}; null otherwise. */
  OverlapScores eventOverlap(long[] blockHashes) {
    if (approximate != null || blockHashes == null || blockHashes.length == 0) {
      return null;
    }
    return primary.findMatches(blockHashes);
  }

  /**
   * Tiered overlap of a query: {@code eventScores} (from {@link #eventOverlap}) or the approximate
   * index, with the predicted side index merged in by per-rank max. Caller holds {@link #lock}.
   */
  OverlapScores overlapLocked(long[] blockHashes, OverlapScores eventScores) {
    if (blockHashes == null || blockHashes.length == 0) {
      return OverlapScores.EMPTY;
    }
    OverlapScores scores = eventScores != null ? eventScores : primary.findMatches(blockHashes);
    if (predicted != null) {
      scores = OverlapMerge.maxDevice(scores, predicted.findMatches(blockHashes));
    }
    return scores;
  }

  /** Records a booked routing decision in the approximate or predicted index. Holds {@link #lock}. */
  void recordBooking(WorkerRank rank, NormalizedPrompt p) {
    if (p.blockHashes() == null || p.blockHashes().length == 0) {
      return;
    }
    TtlBlockIndex target = approximate != null ? approximate : predicted;
    if (target != null) {
      target.record(rank, p.blockHashes(), p.sequenceHashes());
    }
  }

  /**
   * Drops everything this partition knows about one rank (index and active load); returns the
   * ids of the requests that were active on it. Caller holds {@link #lock}.
   */
  List<String> dropRank(WorkerRank rank) {
    primary.removeRank(rank);
    if (predicted != null) {
      predicted.removeRank(rank);
    }
    return load.removeRank(rank);
  }

  /** Expires approximate and predicted entries. Caller holds {@link #lock}. */
  void expire() {
    if (approximate != null) {
      approximate.expire();
    }
    if (predicted != null) {
      predicted.expire();
    }
  }
}
