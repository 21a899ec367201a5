package io.kvselect.core.index;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.StampedLock;
import java.util.function.Supplier;

/**
 * A {@link BlockIndex} split by rank into N shards, each a plain single-threaded index behind its
 * own read-write lock (a {@link StampedLock}: readers and writers spin briefly before parking,
 * which suits write sections of a few microseconds; not reentrant, and no method calls back into
 * this index while holding a lock). Every write for one rank lands on the same shard ({@link #shardOf}), so
 * writers of different shards (one KV-event thread per shard) never contend, and a rank's events
 * apply in the order its writer delivers them. Lookups read every shard under its read lock and
 * merge the per-rank results, which are disjoint because a rank lives on exactly one shard.
 *
 * <p>Thread-safe. {@code findMatches} costs the sum of the shards' lookups plus one lock
 * acquisition per shard; the merged result keeps one part per shard
 * ({@link OverlapScores#sharded}). A write holds only its shard's write lock.
 */
public final class ShardedBlockIndex implements BlockIndex {

  private final BlockIndex[] shards;
  private final StampedLock[] locks;

  public ShardedBlockIndex(int shardCount, Supplier<BlockIndex> factory) {
    if (shardCount < 1) {
      throw new IllegalArgumentException("shardCount must be >= 1");
    }
    shards = new BlockIndex[shardCount];
    locks = new StampedLock[shardCount];
    for (int i = 0; i < shardCount; i++) {
      shards[i] = factory.get();
      locks[i] = new StampedLock();
    }
  }

  @Override
  public ShardedBlockIndex sharded() {
    return this;
  }

  public int shardCount() {
    return shards.length;
  }

  /** The shard that owns {@code rank}: a stable mix of worker id and DP rank. */
  public static int shardOf(WorkerRank rank, int shardCount) {
    long h = rank.workerId() * 0x9E3779B97F4A7C15L + rank.dpRank();
    h ^= h >>> 29;
    h *= 0xBF58476D1CE4E5B9L;
    h ^= h >>> 32;
    return (int) Long.remainderUnsigned(h, shardCount);
  }

  @Override
  public int shardOf(WorkerRank rank) {
    return shardOf(rank, shards.length);
  }

  @Override
  public boolean store(
      WorkerRank rank,
      StorageTier tier,
      boolean hasParent,
      long parentExternalHash,
      long[] externalHashes,
      long[] localHashes) {
    int s = shardOf(rank);
    long stamp = locks[s].writeLock();
    try {
      return shards[s].store(
          rank, tier, hasParent, parentExternalHash, externalHashes, localHashes);
    } finally {
      locks[s].unlockWrite(stamp);
    }
  }

  @Override
  public void remove(WorkerRank rank, StorageTier tier, long[] externalHashes) {
    int s = shardOf(rank);
    long stamp = locks[s].writeLock();
    try {
      shards[s].remove(rank, tier, externalHashes);
    } finally {
      locks[s].unlockWrite(stamp);
    }
  }

  @Override
  public void clearWorker(long workerId) {
    for (int s = 0; s < shards.length; s++) {
      long stamp = locks[s].writeLock();
      try {
        shards[s].clearWorker(workerId);
      } finally {
        locks[s].unlockWrite(stamp);
      }
    }
  }

  @Override
  public void removeRank(WorkerRank rank) {
    int s = shardOf(rank);
    long stamp = locks[s].writeLock();
    try {
      shards[s].removeRank(rank);
    } finally {
      locks[s].unlockWrite(stamp);
    }
  }

  /** One shard's non-empty answer is returned as is; two or more are kept as parts. */
  @Override
  public OverlapScores findMatches(long[] localHashes) {
    OverlapScores single = OverlapScores.EMPTY;
    int singleShard = -1;
    OverlapScores[] parts = null;
    for (int s = 0; s < shards.length; s++) {
      OverlapScores part = findMatchesInShard(s, localHashes);
      if (part.isEmpty()) {
        continue;
      }
      if (singleShard < 0) {
        single = part;
        singleShard = s;
        continue;
      }
      if (parts == null) {
        parts = new OverlapScores[shards.length];
        Arrays.fill(parts, OverlapScores.EMPTY);
        parts[singleShard] = single;
      }
      parts[s] = part;
    }
    return parts == null ? single : OverlapScores.sharded(parts);
  }

  /** Shard {@code s}'s part of {@link #findMatches}, read under that shard's read lock. */
  public OverlapScores findMatchesInShard(int s, long[] localHashes) {
    long stamp = locks[s].readLock();
    try {
      return shards[s].findMatches(localHashes);
    } finally {
      locks[s].unlockRead(stamp);
    }
  }

  /**
   * The answer of {@link #findMatches} from its shards' parts (entry {@code s} is shard {@code s}'s,
   * never null): the one non-empty part as is, two or more kept as parts, else empty. The parts
   * are disjoint since a rank lives on exactly one shard.
   */
  public static OverlapScores merge(OverlapScores[] parts) {
    OverlapScores single = OverlapScores.EMPTY;
    int nonEmpty = 0;
    for (OverlapScores part : parts) {
      if (!part.isEmpty()) {
        single = part;
        nonEmpty++;
      }
    }
    return nonEmpty > 1 ? OverlapScores.sharded(parts.clone()) : single;
  }

  /** Reads the rank's shard under its read lock. */
  @Override
  public long[] externalHashes(WorkerRank rank, long[] localHashes, int depth) {
    int s = shardOf(rank);
    long stamp = locks[s].readLock();
    try {
      return shards[s].externalHashes(rank, localHashes, depth);
    } finally {
      locks[s].unlockRead(stamp);
    }
  }

  @Override
  public long size() {
    long n = 0;
    for (int s = 0; s < shards.length; s++) {
      long stamp = locks[s].readLock();
      try {
        n += shards[s].size();
      } finally {
        locks[s].unlockRead(stamp);
      }
    }
    return n;
  }

  /** Every shard's entries, stably ordered by tier (a rank's parents stay before its children). */
  @Override
  public List<StoredBlock> dump() {
    List<StoredBlock> all = new ArrayList<>();
    for (int s = 0; s < shards.length; s++) {
      long stamp = locks[s].readLock();
      try {
        all.addAll(shards[s].dump());
      } finally {
        locks[s].unlockRead(stamp);
      }
    }
    all.sort(Comparator.comparingInt(b -> b.tier().ordinal()));
    return all;
  }
}
