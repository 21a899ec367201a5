package io.kvselect.core.index;

import java.util.List;

/**
 * Which KV-cache blocks every worker rank holds, per storage tier, for one partition (one
 * block size). Blocks are identified two ways: the {@code localHash} (the router's own hash of the
 * block's tokens, see {@code io.kvselect.core.hash}) on which prefix matching runs, and the
 * engine's opaque {@code externalHash}, used to find a block's parent on store and the block itself
 * on removal, and reported back by {@link #externalHashes} so that another engine can ask the
 * holder for its blocks by the holder's own names. Hashes are unsigned 64-bit values carried in
 * {@code long}s.
 *
 * <p>Threading: implementations are not thread-safe unless they say otherwise; the owner
 * serializes every call.
 */
public interface BlockIndex {

  /**
   * Records that {@code rank} stored a chain of blocks on {@code tier}, extending the block whose
   * external hash is {@code parentExternalHash} (when {@code hasParent}) or starting at the root.
   * An unknown parent rejects the whole store (returns false, nothing changes).
   * {@code externalHashes} and {@code localHashes} have the same length.
   */
  boolean store(
      WorkerRank rank,
      StorageTier tier,
      boolean hasParent,
      long parentExternalHash,
      long[] externalHashes,
      long[] localHashes);

  /** Removes the given blocks of {@code rank} on {@code tier}; unknown hashes are skipped. */
  void remove(WorkerRank rank, StorageTier tier, long[] externalHashes);

  /** Removes every block of every rank of {@code workerId}, on all tiers. */
  void clearWorker(long workerId);

  /**
   * The shard whose owner thread must write {@code rank}'s blocks (0 for an unsharded index); a
   * decorator answers as the index it wraps.
   */
  default int shardOf(WorkerRank rank) {
    return 0;
  }

  /**
   * The {@link ShardedBlockIndex} whose shards this index reads (null for an unsharded one), so a
   * reader can ask for one shard's part; a decorator answers as the index it wraps.
   */
  default ShardedBlockIndex sharded() {
    return null;
  }

  /** Removes every block of one rank, on all tiers. */
  void removeRank(WorkerRank rank);

  /**
   * Per rank, the number of leading blocks of {@code localHashes} (a query's complete blocks in
   * order) that it holds on the device tier, plus the lower-tier extensions.
   */
  OverlapScores findMatches(long[] localHashes);

  /**
   * The external hashes under which {@code rank} stored the leading blocks of
   * {@code localHashes} (a query's complete blocks in order) on the device tier: entry {@code i}
   * is the hash the rank stored for query block {@code i}. At most {@code depth} entries, ending
   * before the first block the rank does not hold on the device tier, so the length never exceeds
   * the rank's device depth in {@link #findMatches}. Empty for an unknown rank or
   * {@code depth <= 0}. When the rank stored one block under two external hashes, either may be
   * returned.
   */
  long[] externalHashes(WorkerRank rank, long[] localHashes, int depth);

  /** Number of indexed (rank, tier, block) entries. */
  long size();

  /** Every entry, parents before children, device tier first. */
  List<StoredBlock> dump();
}
