package io.kvselect.core.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * What every {@link IndexShards} must do, run against each implementation (the direct read here,
 * the read over the node's indexing-shard verticles in {@code server/events}). A subclass says
 * how to make one over a partition -> event index lookup with {@value #SHARDS} shards; the
 * indexes are plain core ones, written by the test before and between reads.
 */
public abstract class IndexShardsContract {

  /** Shards of every sharded index of the contract. */
  protected static final int SHARDS = 4;

  protected static final PartitionKey P = new PartitionKey("m", "default");
  protected static final PartitionKey OTHER = new PartitionKey("m", "other");

  /** An implementation over {@code indexOf}; its sharded indexes have {@value #SHARDS} shards. */
  protected abstract IndexShards shards(Function<PartitionKey, BlockIndex> indexOf)
      throws Exception;

  protected static OverlapScores await(CompletionStage<OverlapScores> s) throws Exception {
    return s.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Stores the first {@code depth} blocks of {@code hashes} for {@code rank} (external = local + 1000). */
  protected static void store(BlockIndex index, WorkerRank rank, long[] hashes, int depth) {
    long[] local = java.util.Arrays.copyOf(hashes, depth);
    long[] external = new long[depth];
    for (int i = 0; i < depth; i++) {
      external[i] = local[i] + 1000 * (rank.workerId() * 10 + rank.dpRank() + 1);
    }
    assertTrue(index.store(rank, StorageTier.DEVICE, false, 0, external, local));
  }

  /** Ranks that fall on at least two different shards, and on every shard when {@code n} is large enough. */
  protected static List<WorkerRank> ranksOnEveryShard(int n) {
    List<WorkerRank> out = new ArrayList<>();
    Set<Integer> shards = new HashSet<>();
    for (long w = 1; out.size() < n; w++) {
      WorkerRank r = new WorkerRank(w, 0);
      out.add(r);
      shards.add(ShardedBlockIndex.shardOf(r, SHARDS));
    }
    assertTrue(shards.size() >= 2, "the ranks span shards: " + shards);
    return out;
  }

  private static final long[] QUERY = {11, 12, 13, 14, 15, 16, 17, 18};

  @Test
  void aPartitionWithoutAnEventIndexAndAQueryWithoutBlocksAnswerNull() throws Exception {
    ShardedBlockIndex index = new ShardedBlockIndex(SHARDS, PrefixChainIndex::new);
    store(index, new WorkerRank(1, 0), QUERY, 4);
    IndexShards s = shards(k -> k.equals(P) ? index : null);
    assertNull(
        await(s.findMatches(OTHER, QUERY)), "no event index (approximate mode, unknown partition)");
    assertNull(await(s.findMatches(P, new long[0])), "no complete block");
    assertNull(await(s.findMatches(P, null)), "no block hashes");
  }

  @Test
  void everyShardsRanksAreInTheAnswerWithTheirDepths() throws Exception {
    ShardedBlockIndex index = new ShardedBlockIndex(SHARDS, PrefixChainIndex::new);
    List<WorkerRank> ranks = ranksOnEveryShard(12);
    for (int i = 0; i < ranks.size(); i++) {
      store(index, ranks.get(i), QUERY, 1 + i % QUERY.length);
    }
    IndexShards s = shards(k -> k.equals(P) ? index : null);
    OverlapScores got = await(s.findMatches(P, QUERY));
    assertEquals(ranks.size(), got.size(), got.toString());
    for (int i = 0; i < ranks.size(); i++) {
      assertEquals(1 + i % QUERY.length, got.of(ranks.get(i)).device(), ranks.get(i).toString());
    }
    assertEquals(index.findMatches(QUERY).ranks(), got.ranks(), "what the index itself answers");
    assertEquals(RankOverlap.NONE, got.of(new WorkerRank(999, 0)));
  }

  @Test
  void aReadSeesTheWritesBeforeItAndNotAStaleCopy() throws Exception {
    ShardedBlockIndex index = new ShardedBlockIndex(SHARDS, PrefixChainIndex::new);
    IndexShards s = shards(k -> index);
    assertTrue(await(s.findMatches(P, QUERY)).isEmpty(), "an empty index matches nothing");
    WorkerRank r = new WorkerRank(7, 1);
    store(index, r, QUERY, 3);
    assertEquals(3, await(s.findMatches(P, QUERY)).of(r).device());
    index.removeRank(r);
    assertTrue(await(s.findMatches(P, QUERY)).isEmpty(), "the removal is seen");
  }

  @Test
  void anUnshardedIndexIsReadAsItAnswers() throws Exception {
    PrefixChainIndex index = new PrefixChainIndex();
    WorkerRank r = new WorkerRank(3, 0);
    store(index, r, QUERY, 5);
    IndexShards s = shards(k -> index);
    assertEquals(Map.of(r, new RankOverlap(5, 0, 0, 0)), await(s.findMatches(P, QUERY)).ranks());
  }

  @Test
  void concurrentReadsAllCompleteWithTheSameAnswer() throws Exception {
    ShardedBlockIndex index = new ShardedBlockIndex(SHARDS, PrefixChainIndex::new);
    List<WorkerRank> ranks = ranksOnEveryShard(8);
    for (WorkerRank r : ranks) {
      store(index, r, QUERY, 2);
    }
    IndexShards s = shards(k -> index);
    List<CompletableFuture<OverlapScores>> all = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      all.add(s.findMatches(P, QUERY).toCompletableFuture());
    }
    for (CompletableFuture<OverlapScores> f : all) {
      assertEquals(index.findMatches(QUERY).ranks(), f.get(10, TimeUnit.SECONDS).ranks());
    }
  }
}
