package io.kvselect.core.index;

import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * A {@link BlockIndex} whose entries expire {@code ttl} after they were last stored: the primary
 * index of approximate mode ({@code use_kv_events=false}, {@code router_ttl_secs}) and the side
 * index of predicted TTL ({@code router_predicted_ttl_secs}), both fed by routing decisions through
 * {@link #record}.
 *
 * <p>Invariants: every (rank, tier, external hash) entry has one deadline, moved forward each time
 * the entry is stored again; {@link #findMatches}, {@link #size} and {@link #dump} first drop every
 * entry whose deadline is at or before {@code clock.millis()}, so expired entries are never
 * counted. {@link #expire} can also be called periodically to bound memory.
 *
 * <p>One authoritative expiry per (rank, tier, external hash) lives in a map; a min-heap holds at
 * most one check record per entry. A refresh only moves the map's expiry forward (no new record:
 * a gateway books the same 500-block prefix hundreds of times a second); when a record reaches
 * the head, its entry is dropped if the map's expiry has passed, or the record is put back with
 * the map's later expiry. Records of entries removed otherwise ({@link #remove},
 * {@link #clearWorker}, {@link #removeRank}) are dropped when they reach the head, and the heap is
 * rebuilt from the map whenever it holds more than {@value #STALE_FACTOR} times the live entries
 * (plus {@value #STALE_SLACK}), so its size stays proportional to what the index holds. Each
 * expiry costs O(log n); a clock that runs backwards makes entries expire late, never early.
 * Before this design every store appended a record per block, and 10 s of booking cycles left
 * 5.3 million records (212 MB) alive for a whole TTL.
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
  private final PriorityQueue<Deadline> queue =
      new PriorityQueue<>(Comparator.comparingLong(Deadline::at));

  /** Entries with an expiry in {@link #deadlines}. */
  private long live;

  static final int STALE_FACTOR = 2;
  static final int STALE_SLACK = 4096;
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
    for (Deadline d = queue.peek(); d != null && d.at <= now; d = queue.peek()) {
      queue.poll();
      Long2LongOpenHashMap m = map(d.rank, d.tier);
      if (m == null || !m.containsKey(d.ext)) {
        continue; // removed meanwhile
      }
      long at = m.get(d.ext);
      if (at > now) {
        queue.add(new Deadline(d.rank, d.tier, d.ext, at)); // refreshed since: check again then
        continue;
      }
      m.remove(d.ext);
      live--;
      one[0] = d.ext;
      index.remove(d.rank, StorageTier.values()[d.tier], one);
      dropped++;
    }
    boundStale();
    return dropped;
  }

  /** Check records held now: at most one per live entry, plus stale ones within the bound. */
  int pendingDeadlines() {
    return queue.size();
  }

  /** Entries with an expiry. */
  long liveEntries() {
    return live;
  }

  private Long2LongOpenHashMap map(WorkerRank rank, int tier) {
    Long2LongOpenHashMap[] byTier = deadlines.get(rank);
    return byTier == null ? null : byTier[tier];
  }

  /** Rebuilds the heap from the map when stale records outnumber the bound. */
  private void boundStale() {
    if (queue.size() <= STALE_FACTOR * live + STALE_SLACK) {
      return;
    }
    queue.clear();
    deadlines.forEach(
        (rank, byTier) -> {
          for (int t = 0; t < byTier.length; t++) {
            if (byTier[t] != null) {
              int tier = t;
              byTier[t]
                  .long2LongEntrySet()
                  .fastForEach(
                      e -> queue.add(new Deadline(rank, tier, e.getLongKey(), e.getLongValue())));
            }
          }
        });
  }

  @Override
  public boolean store(
      WorkerRank rank,
      StorageTier tier,
      boolean hasParent,
      long parentExternalHash,
      long[] externalHashes,
      long[] localHashes) {
    expire();
    if (!index.store(rank, tier, hasParent, parentExternalHash, externalHashes, localHashes)) {
      return false;
    }
    if (externalHashes.length == 0) {
      return true;
    }
    long at = clock.millis() + ttlMillis;
    int t = tier.ordinal();
    Long2LongOpenHashMap[] byTier =
        deadlines.computeIfAbsent(rank, k -> new Long2LongOpenHashMap[TIERS]);
    if (byTier[t] == null) {
      byTier[t] = new Long2LongOpenHashMap();
      byTier[t].defaultReturnValue(Long.MIN_VALUE);
    }
    for (long ext : externalHashes) {
      if (byTier[t].put(ext, at) == Long.MIN_VALUE) {
        live++;
        queue.add(
            new Deadline(rank, t, ext, at)); // a new entry; a refresh only moved the map's expiry
      }
    }
    return true;
  }

  @Override
  public void remove(WorkerRank rank, StorageTier tier, long[] externalHashes) {
    index.remove(rank, tier, externalHashes);
    Long2LongOpenHashMap[] byTier = deadlines.get(rank);
    if (byTier != null && byTier[tier.ordinal()] != null) {
      Long2LongOpenHashMap m = byTier[tier.ordinal()];
      for (long ext : externalHashes) {
        if (m.containsKey(ext)) {
          m.remove(ext);
          live--;
        }
      }
    }
    boundStale();
  }

  @Override
  public void clearWorker(long workerId) {
    index.clearWorker(workerId);
    deadlines
        .entrySet()
        .removeIf(
            e -> {
              if (e.getKey().workerId() != workerId) {
                return false;
              }
              live -= entries(e.getValue());
              return true;
            });
    boundStale();
  }

  @Override
  public void removeRank(WorkerRank rank) {
    index.removeRank(rank);
    Long2LongOpenHashMap[] byTier = deadlines.remove(rank);
    if (byTier != null) {
      live -= entries(byTier);
    }
    boundStale();
  }

  private static long entries(Long2LongOpenHashMap[] byTier) {
    long n = 0;
    for (Long2LongOpenHashMap m : byTier) {
      n += m == null ? 0 : m.size();
    }
    return n;
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
