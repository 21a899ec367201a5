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

  /** Removes every block of one rank, on all tiers. */
  void removeRank(WorkerRank rank);

  /**
   * Per rank, the number of leading blocks of {@code localHashes} (a query's complete blocks in
   * order) that it holds on the device tier, plus the lower-tier extensions.
   */
  OverlapScores findMatches(long[] localHashes);

  /**
   * {@link #findMatches(long[])} into a caller-owned buffer, replacing its content: the same
   * ranks and overlaps. {@link PrefixChainIndex} and {@link ShardedBlockIndex} of it allocate
   * nothing per query once the buffer and their per-thread scratch have grown to the result
   * size; this default copies the result of {@link #findMatches(long[])}.
   */
  default void findMatches(long[] localHashes, MatchBuffer out) {
    out.clear();
    findMatches(localHashes).forEach(out::add);
  }

  /**
   * {@link #findMatches(long[])} into a caller-owned {@link MatchLevels}, replacing its content:
   * the same ranks and overlaps, kept by the depth at which ranks drop out of the query's path so
   * that the lookup's cost does not grow with the number of ranks that match only a short prefix
   * ({@link PrefixChainIndex}, {@link ShardedBlockIndex} of it). The caller reads a rank's overlap
   * on demand or visits every scored rank. This default copies the result of
   * {@link #findMatches(long[])}.
   */
  default void findMatchLevels(long[] localHashes, MatchLevels out) {
    out.clear();
    findMatches(localHashes).forEach(out::addNamed);
  }

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
