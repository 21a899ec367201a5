package io.kvselect.server.events;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.service.IndexShards;
import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.bus.LocalCodec;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * {@link IndexShards} over the bus: a query is sent to every shard's {@link IndexShardVerticle}
 * ({@link LocalAddresses#indexRead}, {@link LocalCodec}), each answers its shard's part, and the
 * parts are merged as {@link ShardedBlockIndex#findMatches} merges them. The alternative to the
 * direct read that the node measured and did not take ({@code docs/design.md}, "Communication
 * inside a node"); a node uses it only with {@code -Dkvselect.index.reads=bus}.
 *
 * <p>A shard that does not answer within {@link #TIMEOUT_MS} (or has no verticle) is read in
 * place instead, and counted in {@link #fallbacks}: a selection never fails for the hop.
 *
 * <p>State: {@link #fallbacks} only (atomic); each query's parts are filled by its replies, the
 * last of which (by an atomic count) merges them.
 */
public final class BusIndexShards implements IndexShards {

  /** The system property that selects this read path ({@code bus}); anything else is the direct read. */
  public static final String PROPERTY = "kvselect.index.reads";

  /** The send timeout of one shard's read. */
  static final long TIMEOUT_MS = 1_000;

  /** A query's block hashes for one partition, sent to each shard. */
  public record ShardRead(PartitionKey partition, long[] blockHashes) {}

  private final Vertx vertx;
  private final Function<PartitionKey, BlockIndex> indexOf;
  private final AtomicLong fallbacks = new AtomicLong();

  public BusIndexShards(Vertx vertx, Function<PartitionKey, BlockIndex> indexOf) {
    this.vertx = vertx;
    this.indexOf = indexOf;
    LocalCodec.register(vertx);
  }

  /** Whether this node's selections read the index over the bus ({@link #PROPERTY} is {@code bus}). */
  public static boolean selected() {
    return "bus".equals(System.getProperty(PROPERTY));
  }

  /** Shard reads that were answered in place because the shard's verticle did not answer. */
  public long fallbacks() {
    return fallbacks.get();
  }

  @Override
  public CompletionStage<OverlapScores> findMatches(PartitionKey partition, long[] blockHashes) {
    BlockIndex index =
        blockHashes == null || blockHashes.length == 0 ? null : indexOf.apply(partition);
    ShardedBlockIndex sharded = index == null ? null : index.sharded();
    if (sharded == null) {
      return CompletableFuture.completedFuture(
          index == null ? null : index.findMatches(blockHashes));
    }
    int n = sharded.shardCount();
    OverlapScores[] parts = new OverlapScores[n];
    AtomicInteger left = new AtomicInteger(n);
    CompletableFuture<OverlapScores> out = new CompletableFuture<>();
    ShardRead read = new ShardRead(partition, blockHashes);
    DeliveryOptions o = LocalCodec.options().setSendTimeout(TIMEOUT_MS);
    for (int s = 0; s < n; s++) {
      int shard = s;
      vertx
          .eventBus()
          .<OverlapScores>request(LocalAddresses.indexRead(shard), read, o)
          .onComplete(
              ar -> {
                if (ar.succeeded()) {
                  parts[shard] = ar.result().body();
                } else {
                  fallbacks.incrementAndGet();
                  parts[shard] = sharded.findMatchesInShard(shard, blockHashes);
                }
                if (left.decrementAndGet() == 0) {
                  out.complete(ShardedBlockIndex.merge(parts));
                }
              });
    }
    return out;
  }

  /** Answers a {@link ShardRead} with shard {@code shard}'s part (empty when the partition has no such index). */
  static void answer(Message<ShardRead> m, int shard, Function<PartitionKey, BlockIndex> indexOf) {
    ShardRead r = m.body();
    BlockIndex index = indexOf.apply(r.partition());
    ShardedBlockIndex sharded = index == null ? null : index.sharded();
    OverlapScores part =
        sharded != null && shard < sharded.shardCount()
            ? sharded.findMatchesInShard(shard, r.blockHashes())
            : OverlapScores.EMPTY;
    m.reply(part, LocalCodec.options());
  }
}
