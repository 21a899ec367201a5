package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.ShardedBlockIndex;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Where a selection reads the event-driven overlap of its query: the shards of one partition's
 * event index, read and merged into one {@link OverlapScores}. This is the index's asynchronous
 * seam, shaped like the session table's and the pending store's: the node's implementation reads
 * the shards in place ({@link #direct}, completing before it returns); another may ask each
 * shard's owner (the node's indexing-shard verticles over the bus, measured in
 * {@code docs/design.md}), or members that hold shards of their own, and complete later, on its
 * own threads, without the selection code changing.
 *
 * <p>Contract ({@code IndexShardsContract}): completes with null when the partition has no
 * event-driven index (approximate mode, an unknown partition) or the query has no complete block
 * (the selection then reads the approximate index under the partition's lock); otherwise with
 * what the partition's index answers for {@code blockHashes}, every shard included. Never
 * completes exceptionally for a lookup the index itself answers; callers never wait on the stage.
 *
 * <p>Threading: safe from any thread; never called with a partition's lock held.
 */
public interface IndexShards {

  /** The overlap of {@code blockHashes} (a query's complete blocks, in order) in {@code partition}. */
  CompletionStage<OverlapScores> findMatches(PartitionKey partition, long[] blockHashes);

  /**
   * Reads {@code indexOf(partition)} in place (null: no event-driven index), under each shard's
   * read lock when it is a {@link ShardedBlockIndex}.
   */
  static IndexShards direct(Function<PartitionKey, BlockIndex> indexOf) {
    return (partition, blockHashes) -> {
      BlockIndex index =
          blockHashes == null || blockHashes.length == 0 ? null : indexOf.apply(partition);
      return CompletableFuture.completedFuture(
          index == null ? null : index.findMatches(blockHashes));
    };
  }
}
