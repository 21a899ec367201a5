package io.kvselect.server.events;

import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.bus.LocalCodec;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The hand-off from KV-event ingestion to the index shards: the poller that owns shard {@code s}
 * submits the shard's writes (decoded batches, rank removals, barriers) as it produces them, and
 * at the end of each poll round sends them, as one {@link ShardCommand.Round}, to
 * {@link LocalAddresses#indexShard}{@code (s)}, where the shard's {@link IndexShardVerticle} applies
 * them in order. One sender per shard (its owner poller) and one ordered consumer, so a rank's
 * writes apply in the order the poller read them, and a removal submitted after a batch applies
 * after it.
 *
 * <p>Back-pressure: at most {@link #MAX_ROUNDS_IN_FLIGHT} rounds per shard wait for the verticle;
 * past that the poller waits (as it waited for its own writes before the hand-off existed), so a
 * slow shard slows its publishers' reads instead of filling the heap. Nobody waits once the shards
 * are closed (the node is stopping): rounds are then dropped and barriers complete.
 *
 * <p>Ownership: {@code pending[s]} belongs to shard {@code s}'s owner poller (the only caller of
 * {@link #submit} and {@link #flush} for it); the in-flight counts are atomics shared with the
 * verticles; {@link #barriers} is a concurrent set.
 */
public final class ShardWriters {

  private static final Logger LOG = LoggerFactory.getLogger(ShardWriters.class);

  /** Rounds per shard sent and not yet applied before the owner poller waits. */
  static final int MAX_ROUNDS_IN_FLIGHT = 64;

  private final EventBus bus;
  private final int shards;
  private final int pollers;
  private final List<ShardCommand>[] pending;
  private final AtomicInteger[] inFlight;

  /** Barriers submitted and not yet reached: completed by {@link #close} if the node stops first. */
  private final Set<CompletableFuture<Void>> barriers = ConcurrentHashMap.newKeySet();

  private volatile boolean closed;

  /** Hand-offs to {@code shards} shards, owned by {@code pollers} pollers (shard s by poller s mod pollers). */
  @SuppressWarnings("unchecked")
  public ShardWriters(Vertx vertx, int shards, int pollers) {
    if (shards < 1 || pollers < 1) {
      throw new IllegalArgumentException("shards and pollers must be >= 1");
    }
    LocalCodec.register(vertx);
    this.bus = vertx.eventBus();
    this.shards = shards;
    this.pollers = pollers;
    this.pending = new List[shards];
    this.inFlight = new AtomicInteger[shards];
    for (int s = 0; s < shards; s++) {
      pending[s] = new ArrayList<>();
      inFlight[s] = new AtomicInteger();
    }
  }

  public int shards() {
    return shards;
  }

  /** Owner poller of {@code shard} only: queues {@code c} for the round's message. */
  void submit(int shard, ShardCommand c) {
    if (closed) {
      if (c instanceof ShardCommand.Barrier b) {
        b.done().complete(null);
      }
      return;
    }
    if (c instanceof ShardCommand.Barrier b) {
      barriers.add(b.done());
    }
    pending[Math.floorMod(shard, shards)].add(c);
  }

  /** Owner poller only: a future completed once everything {@code shard}'s poller submitted so far is applied. */
  CompletableFuture<Void> barrier(int shard) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    submit(shard, new ShardCommand.Barrier(done));
    return done;
  }

  /** Poller {@code poller}, at the end of each round: sends what it submitted for each of its shards. */
  public void flush(int poller) {
    for (int s = Math.floorMod(poller, pollers); s < shards; s += pollers) {
      List<ShardCommand> round = pending[s];
      if (round.isEmpty()) {
        continue;
      }
      pending[s] = new ArrayList<>();
      while (!closed && inFlight[s].get() >= MAX_ROUNDS_IN_FLIGHT) {
        LockSupport.parkNanos(50_000);
      }
      if (closed) {
        completeBarriers(round);
        continue;
      }
      inFlight[s].incrementAndGet();
      bus.send(
          LocalAddresses.indexShard(s), new ShardCommand.Round(s, round), LocalCodec.options());
    }
  }

  /** The shard's verticle: applies one round, in order; a command that throws is logged and skipped. */
  void apply(ShardCommand.Round round) {
    try {
      for (ShardCommand c : round.commands()) {
        try {
          run(c);
        } catch (RuntimeException e) {
          LOG.error("index shard {}: a write failed", round.shard(), e);
        }
      }
    } finally {
      inFlight[round.shard()].decrementAndGet();
    }
  }

  private void run(ShardCommand c) {
    if (c instanceof ShardCommand.Apply a) {
      a.writer().applyOnShard(a.batch());
    } else if (c instanceof ShardCommand.RemoveRank r) {
      r.index().removeRank(r.rank());
    } else if (c instanceof ShardCommand.Barrier b) {
      barriers.remove(b.done());
      b.done().complete(null);
    }
  }

  /** Rounds sent to {@code shard} and not yet applied. */
  int inFlight(int shard) {
    return inFlight[shard].get();
  }

  /** The node is stopping: nobody waits for a shard any more, and every barrier completes. Idempotent. */
  public void close() {
    closed = true;
    for (CompletableFuture<Void> b : List.copyOf(barriers)) {
      b.complete(null);
    }
    barriers.clear();
  }

  private void completeBarriers(List<ShardCommand> round) {
    for (ShardCommand c : round) {
      if (c instanceof ShardCommand.Barrier b) {
        barriers.remove(b.done());
        b.done().complete(null);
      }
    }
  }
}
