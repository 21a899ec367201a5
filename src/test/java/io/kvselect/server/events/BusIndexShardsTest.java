package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.ResidentModel;
import io.kvselect.core.kvc.ResidentModelFeed;
import io.kvselect.core.service.IndexShards;
import io.kvselect.core.service.IndexShardsContract;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The index read over the bus: each shard's {@link IndexShardVerticle}, deployed as the node
 * deploys it (a worker verticle per shard), answers its part on its read address, and the parts
 * merge into what the index answers in place.
 */
class BusIndexShardsTest extends IndexShardsContract {

  private final Vertx vertx = Vertx.vertx();
  private final List<String> deployments = new ArrayList<>();
  private BusIndexShards last;

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Override
  protected IndexShards shards(Function<PartitionKey, BlockIndex> indexOf) throws Exception {
    ShardWriters writers = new ShardWriters(vertx, SHARDS, SHARDS);
    DeploymentOptions o =
        new DeploymentOptions()
            .setThreadingModel(ThreadingModel.WORKER)
            .setWorkerPoolName("kvselect-index-shard")
            .setWorkerPoolSize(SHARDS);
    for (int s = 0; s < SHARDS; s++) {
      deployments.add(
          vertx
              .deployVerticle(new IndexShardVerticle(writers, s, indexOf), o)
              .toCompletionStage()
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS));
    }
    last = new BusIndexShards(vertx, indexOf);
    return last;
  }

  @Test
  void everyShardAnswersOverTheBusAndNoneIsReadInPlace() throws Exception {
    ShardedBlockIndex index = new ShardedBlockIndex(SHARDS, PrefixChainIndex::new);
    List<WorkerRank> ranks = ranksOnEveryShard(16);
    long[] q = {1, 2, 3, 4};
    for (WorkerRank r : ranks) {
      store(index, r, q, 2);
    }
    IndexShards s = shards(k -> index);
    assertEquals(ranks.size(), await(s.findMatches(P, q)).size());
    assertEquals(0, last.fallbacks(), "every part came from its shard's verticle");
  }

  @Test
  void aDecoratedShardedIndexIsStillReadShardByShard() throws Exception {
    ShardedBlockIndex index = new ShardedBlockIndex(SHARDS, PrefixChainIndex::new);
    BlockIndex fed = new ResidentModelFeed(index, new ResidentModel());
    List<WorkerRank> ranks = ranksOnEveryShard(16);
    long[] q = {1, 2, 3, 4};
    for (WorkerRank r : ranks) {
      store(fed, r, q, 2);
    }
    IndexShards s = shards(k -> fed);
    assertEquals(index.findMatches(q).ranks(), await(s.findMatches(P, q)).ranks());
    assertEquals(
        0, last.fallbacks(), "every part came from its shard's verticle, through the decorator");
  }

  @Test
  void aShardWithoutItsVerticleIsReadInPlaceAndCounted() throws Exception {
    ShardedBlockIndex index = new ShardedBlockIndex(SHARDS, PrefixChainIndex::new);
    List<WorkerRank> ranks = ranksOnEveryShard(16);
    long[] q = {1, 2, 3, 4};
    for (WorkerRank r : ranks) {
      store(index, r, q, 3);
    }
    IndexShards s = shards(k -> index);
    vertx
        .undeploy(deployments.get(0))
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
    assertEquals(
        index.findMatches(q).ranks(), await(s.findMatches(P, q)).ranks(), "the answer is whole");
    assertEquals(1, last.fallbacks(), "shard 0 had no verticle");
    assertTrue(
        ranks.stream().anyMatch(r -> ShardedBlockIndex.shardOf(r, SHARDS) == 0),
        "shard 0 holds ranks");
  }
}
