package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapMerge;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.TtlBlockIndex;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.ActiveLoad;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeMap;

/**
 * The state of one routing partition: its workers, block size, indexes and active load.
 * Owned by the {@link SelectionService} lock: every access happens under it.
 *
 * <p>The primary index is event-driven ({@code use_kv_events=true}) or approximate (bookings
 * recorded with a TTL). With a predicted TTL, a side index of recent bookings is merged into
 * device scores by per-rank max.
 */
final class Partition {

  final PartitionKey key;
  final BlockIndex primary;
  final TtlBlockIndex approximate;
  final TtlBlockIndex predicted;
  final ActiveLoad load;
  final TreeMap<Long, WorkerRecord> workers = new TreeMap<>(Long::compareUnsigned);
  Integer blockSize;
  Boolean eagle;
  private List<WorkerRank> schedulableRanks = List.of();

  Partition(PartitionKey key, ServiceSettings s, Clock clock) {
    this.key = key;
    var cfg = s.router();
    if (cfg.useKvEvents()) {
      this.approximate = null;
      this.primary = s.eventIndexFactory().get();
      this.predicted = cfg.predictedTtlSecs() == null
          ? null : new TtlBlockIndex(seconds(cfg.predictedTtlSecs()), clock);
    } else {
      this.approximate = new TtlBlockIndex(seconds(cfg.routerTtlSecs()), clock);
      this.primary = approximate;
      this.predicted = null;
    }
    this.load = new ActiveLoad(clock, seconds(cfg.activeRequestExpirySecs()));
  }

  private static Duration seconds(double s) {
    return Duration.ofNanos((long) (s * 1_000_000_000L));
  }

  /** Recomputes the cached schedulable rank list and the partition's block size after a change. */
  void refresh() {
    List<WorkerRank> ranks = new ArrayList<>();
    Integer bs = null;
    Boolean eg = null;
    for (WorkerRecord w : workers.values()) {
      if (w.schedulable()) {
        ranks.addAll(w.ranks());
        bs = w.spec().blockSize();
        eg = w.spec().isEagle();
      }
    }
    Collections.sort(ranks);
    for (WorkerRank r : ranks) {
      load.addRank(r);
    }
    schedulableRanks = List.copyOf(ranks);
    if (bs != null) {
      blockSize = bs;
      eagle = eg;
    } else if (workers.isEmpty()) {
      blockSize = null;
      eagle = null;
    }
  }

  List<WorkerRank> schedulableRanks() {
    return schedulableRanks;
  }

  boolean ready() {
    return !schedulableRanks.isEmpty();
  }

  WorkerRecord schedulableWorker(long workerId) {
    WorkerRecord w = workers.get(workerId);
    return w != null && w.schedulable() ? w : null;
  }

  /** Tiered overlap of a query, with the predicted side index merged in. */
  OverlapScores overlap(long[] blockHashes) {
    if (blockHashes == null || blockHashes.length == 0) {
      return OverlapScores.EMPTY;
    }
    OverlapScores scores = primary.findMatches(blockHashes);
    if (predicted != null) {
      scores = OverlapMerge.maxDevice(scores, predicted.findMatches(blockHashes));
    }
    return scores;
  }

  /** Records a booked routing decision in the approximate or predicted index. */
  void recordBooking(WorkerRank rank, NormalizedPrompt p) {
    if (p.blockHashes() == null || p.blockHashes().length == 0) {
      return;
    }
    TtlBlockIndex target = approximate != null ? approximate : predicted;
    if (target != null) {
      target.record(rank, p.blockHashes(), p.sequenceHashes());
    }
  }

  /** Drops everything this partition knows about one rank (index and active load). */
  List<String> dropRank(WorkerRank rank) {
    primary.removeRank(rank);
    if (predicted != null) {
      predicted.removeRank(rank);
    }
    return load.removeRank(rank);
  }

  void expire() {
    if (approximate != null) {
      approximate.expire();
    }
    if (predicted != null) {
      predicted.expire();
    }
  }
}
