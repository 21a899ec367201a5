package io.kvselect.server.events;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.bus.LocalCodec;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.function.Function;

/**
 * The indexing-shard verticle of shard {@code s}: the only writer of shard {@code s} of every
 * partition's event index (apart from the catalog's eager drop of a removed rank, which the
 * shard's own removal then confirms). It consumes {@link LocalAddresses#indexShard}{@code (s)},
 * where KV-event ingestion hands it each poll round's decoded batches and removals
 * ({@link ShardWriters}), and applies them in order under the shard's write lock. Deployed as a
 * worker verticle (one at a time, off the event loops: a large batch never delays an HTTP
 * answer); selections keep reading the shard concurrently under its read lock. It also answers
 * reads of its shard on {@link LocalAddresses#indexRead}{@code (s)}, which only a node reading the
 * index over the bus sends ({@link BusIndexShards}); they queue behind the rounds sent before them.
 */
public final class IndexShardVerticle extends VerticleBase {

  private final ShardWriters writers;
  private final int shard;
  private final Function<PartitionKey, BlockIndex> indexOf;

  /** This verticle's context. */
  private MessageConsumer<ShardCommand.Round> rounds;

  /** This verticle's context. */
  private MessageConsumer<BusIndexShards.ShardRead> reads;

  /** {@code indexOf}: a partition's event index (null: none), for the reads of this shard. */
  public IndexShardVerticle(
      ShardWriters writers, int shard, Function<PartitionKey, BlockIndex> indexOf) {
    this.writers = writers;
    this.shard = shard;
    this.indexOf = indexOf;
  }

  /** The shard this verticle writes. */
  public int shard() {
    return shard;
  }

  @Override
  public Future<?> start() {
    LocalCodec.register(vertx);
    rounds =
        vertx
            .eventBus()
            .localConsumer(LocalAddresses.indexShard(shard), m -> writers.apply(m.body()));
    reads =
        vertx
            .eventBus()
            .localConsumer(
                LocalAddresses.indexRead(shard), m -> BusIndexShards.answer(m, shard, indexOf));
    return rounds.completion().compose(v -> reads.completion());
  }

  @Override
  public Future<?> stop() {
    writers.close();
    MessageConsumer<ShardCommand.Round> c = rounds;
    MessageConsumer<BusIndexShards.ShardRead> r = reads;
    Future<Void> f = r == null ? Future.succeededFuture() : r.unregister();
    return c == null ? f : f.compose(v -> c.unregister());
  }
}
