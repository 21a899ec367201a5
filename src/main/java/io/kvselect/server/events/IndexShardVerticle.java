package io.kvselect.server.events;

import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.bus.LocalCodec;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;

/**
 * The indexing-shard verticle of shard {@code s}: the only writer of shard {@code s} of every
 * partition's event index (apart from the catalog's eager drop of a removed rank, which the
 * shard's own removal then confirms). It consumes {@link LocalAddresses#indexShard}{@code (s)},
 * where KV-event ingestion hands it each poll round's decoded batches and removals
 * ({@link ShardWriters}), and applies them in order under the shard's write lock. Deployed as a
 * worker verticle (one at a time, off the event loops: a large batch never delays an HTTP
 * answer); selections keep reading the shard concurrently under its read lock.
 */
public final class IndexShardVerticle extends VerticleBase {

  private final ShardWriters writers;
  private final int shard;
  /** This verticle's context. */
  private MessageConsumer<ShardCommand.Round> rounds;

  public IndexShardVerticle(ShardWriters writers, int shard) {
    this.writers = writers;
    this.shard = shard;
  }

  /** The shard this verticle writes. */
  public int shard() {
    return shard;
  }

  @Override
  public Future<?> start() {
    LocalCodec.register(vertx);
    rounds = vertx.eventBus().localConsumer(LocalAddresses.indexShard(shard), m -> writers.apply(m.body()));
    return rounds.completion();
  }

  @Override
  public Future<?> stop() {
    writers.close();
    MessageConsumer<ShardCommand.Round> c = rounds;
    return c == null ? Future.succeededFuture() : c.unregister();
  }
}
