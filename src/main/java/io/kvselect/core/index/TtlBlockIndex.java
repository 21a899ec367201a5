package io.kvselect.core.index;

import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link BlockIndex} whose entries expire {@code ttl} after they were last stored: the primary
 * index of approximate mode ({@code use_kv_events=false}, {@code router_ttl_secs}) and the side
 * index of predicted TTL ({@code router_predicted_ttl_secs}), both fed by routing decisions through
 * {@link #record}.
 *
 * <p>Invariants: every (rank, tier, external hash) entry has one deadline, moved forward each time
 * the entry is stored again; {@link #findMatches}, {@link #size} and {@link #dump} first drop every
 * entry whose deadline is at or before {@code clock.millis()}, so expired entries are never
 * counted. {@link #expire} can also be called periodically to bound memory. Deadlines are kept in
 * an insertion-ordered queue (a refresh appends a new deadline; the superseded one is skipped when
 * it reaches the head), so expiry costs O(1) amortized per stored entry as long as the clock does
 * not run backwards (if it does, affected entries expire late, never early).
 *
 * <p>Threading: not thread-safe; like the wrapped index, one owner thread serializes every call.
 */
public final class TtlBlockIndex implements BlockIndex {

  private record Deadline(WorkerRank rank, int tier, long ext, long at) {}

  private static final int TIERS = StorageTier.values().length;

  private final BlockIndex index;
  private final Clock clock;
  private final long ttlMillis;
  private final Map<WorkerRank, Long2LongOpenHashMap[]> deadlines = new HashMap<>();
  private final ArrayDeque<Deadline> queue = new ArrayDeque<>();
  private final long[] one = new long[1];

  /** Wraps a fresh {@link PrefixChainIndex}. */
  public TtlBlockIndex(Duration ttl, Clock clock) {
    this(new PrefixChainIndex(), ttl, clock);
  }

  /** Wraps {@code index}, which must be empty and must not be used directly afterwards. */
  public TtlBlockIndex(BlockIndex index, Duration ttl, Clock clock) {
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
    this.index = index;
    this.clock = clock;
    this.ttlMillis = ttl.toMillis();
  }

  /**
   * Records a routing decision: {@code rank} is assumed to hold the request's blocks from the root,
   * on the device tier, with the router's sequence hashes as external hashes. Refreshes the
   * deadline of blocks already recorded. Both arrays have the same length.
   */
  public void record(WorkerRank rank, long[] localHashes, long[] sequenceHashes) {
    store(rank, StorageTier.DEVICE, false, 0L, sequenceHashes, localHashes);
  }

  /** Drops every entry whose deadline has passed; returns how many were dropped. */
  public int expire() {
    long now = clock.millis();
    int dropped = 0;
    for (Deadline d = queue.peekFirst(); d != null && d.at <= now; d = queue.peekFirst()) {
      queue.pollFirst();
      Long2LongOpenHashMap[] byTier = deadlines.get(d.rank);
      Long2LongOpenHashMap m = byTier == null ? null : byTier[d.tier];
      if (m == null || !m.containsKey(d.ext) || m.get(d.ext) != d.at) {
        continue;
      }
      m.remove(d.ext);
      one[0] = d.ext;
      index.remove(d.rank, StorageTier.values()[d.tier], one);
      dropped++;
    }
    return dropped;
  }

  @Override
  public boolean store(
      WorkerRank rank, StorageTier tier, boolean hasParent, long parentExternalHash,
      long[] externalHashes, long[] localHashes) {
    expire();
    if (!index.store(rank, tier, hasParent, parentExternalHash, externalHashes, localHashes)) {
      return false;
    }
    if (externalHashes.length == 0) {
      return true;
    }
    long at = clock.millis() + ttlMillis;
    int t = tier.ordinal();
    Long2LongOpenHashMap[] byTier = deadlines.computeIfAbsent(rank, k -> new Long2LongOpenHashMap[TIERS]);
    if (byTier[t] == null) {
      byTier[t] = new Long2LongOpenHashMap();
    }
    for (long ext : externalHashes) {
      byTier[t].put(ext, at);
      queue.addLast(new Deadline(rank, t, ext, at));
    }
    return true;
  }

  @Override
  public void remove(WorkerRank rank, StorageTier tier, long[] externalHashes) {
    index.remove(rank, tier, externalHashes);
    Long2LongOpenHashMap[] byTier = deadlines.get(rank);
    if (byTier != null && byTier[tier.ordinal()] != null) {
      for (long ext : externalHashes) {
        byTier[tier.ordinal()].remove(ext);
      }
    }
  }

  @Override
  public void clearWorker(long workerId) {
    index.clearWorker(workerId);
    deadlines.keySet().removeIf(r -> r.workerId() == workerId);
  }

  @Override
  public void removeRank(WorkerRank rank) {
    index.removeRank(rank);
    deadlines.remove(rank);
  }

  @Override
  public OverlapScores findMatches(long[] localHashes) {
    expire();
    return index.findMatches(localHashes);
  }

  /**
   * {@inheritDoc}
   *
   * <p>After dropping expired entries. Entries made by {@link #record} carry the router's own
   * sequence hashes, since a booking knows no engine hash, so for them this returns those; entries
   * made by {@link #store} return the external hashes given there.
   */
  @Override
  public long[] externalHashes(WorkerRank rank, long[] localHashes, int depth) {
    expire();
    return index.externalHashes(rank, localHashes, depth);
  }

  @Override
  public long size() {
    expire();
    return index.size();
  }

  @Override
  public List<StoredBlock> dump() {
    expire();
    return index.dump();
  }
}
