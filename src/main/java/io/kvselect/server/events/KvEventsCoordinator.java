// Over 400 lines: one reconciliation of subscriptions against the catalog (add, retire, hold,
// release, restart), every step under the same ordering rule.
package io.kvselect.server.events;

import io.kvselect.core.catalog.CatalogListener;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.SelectionService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one KV-event subscription per schedulable worker rank in step with the catalog, each
 * delivering to a {@link RankWriter} that applies the rank's batches to its partition's event
 * index.
 *
 * <p>Registration rules (Dynamo's "Worker Restarts"): a rank whose event and replay endpoints are
 * unchanged keeps its listener, watermark and blocks; a changed endpoint gets a fresh listener and
 * loses its blocks; a removed worker's listeners are stopped and its blocks removed.
 *
 * <p>Ownership: a rank's subscription runs on the poller that owns the rank's index shard
 * ({@link ShardedBlockIndex#shardOf}, see {@link KvEventIngest}), and every write of the rank's
 * blocks is submitted there, in order, to the shard's {@link IndexShardVerticle}
 * ({@link ShardWriters}), the shard's only writer: its batches, its resets, and the removals the
 * catalog asks for. A retired rank is handled with one ordered sequence on that thread: close the
 * old socket, then submit the removal of the rank's blocks, then (for a changed endpoint) open the
 * new socket; so a batch the old socket had already read is applied before the removal and
 * nothing from the old listener survives it. The retirement completes once the shard has applied
 * the removal.
 *
 * <p>Holding ({@link #hold}, {@link #release}): while a joining node copies a peer's index, every
 * rank's writer keeps its deliveries (batches and resets, in order) instead of applying them, up
 * to {@link #HOLD_LIMIT_BYTES} of payload in all (the rest is dropped and counted, as lost as without holding); {@code release} applies each writer's held
 * deliveries on its owner thread, on top of the copy, and stops holding. Because the listeners are
 * subscribed before the peer takes its snapshot, every event the snapshot misses is among the
 * held ones; applying an event the snapshot already reflects changes nothing (a store of a stored
 * block, a removal of an absent one), so no sequence bookkeeping is needed.
 *
 * <p>Threading: catalog callbacks run on the catalog's thread (one at a time for a worker) and only
 * post commands; they never throw. {@link #stats} and the counters may be read from any thread.
 * The holding flag is guarded by {@link #holdLock}, shared by {@link #start} and {@link #release}
 * so that no writer is created holding after the release has listed the writers to drain.
 */
public final class KvEventsCoordinator implements CatalogListener {

  private static final Logger LOG = LoggerFactory.getLogger(KvEventsCoordinator.class);

  /**
   * The default sink of the {@link KvEventIngest} a coordinator subscribes through: deliveries for a
   * subscription opened without a writer of its own. The coordinator opens none, so this only logs.
   */
  public static final BatchSink UNSUBSCRIBED =
      new BatchSink() {
        @Override
        public void onBatch(WorkerRank rank, long seq, byte[] payload) {
          LOG.warn("batch {} of {} has no writer; dropped", seq, rank);
        }

        @Override
        public void onReset(WorkerRank rank, String reason) {
          LOG.warn("reset of {} has no writer; ignored", rank);
        }
      };

  private final SelectionService service;
  private final KvEventIngest ingest;

  /** Where the owner pollers hand the shards their writes. */
  private final ShardWriters shards;

  /** Catalog thread. */
  private final Map<Long, RankTarget> targets = new ConcurrentHashMap<>();

  /** Put by the catalog thread when a subscription opens; removed by the rank's owner when closed. */
  private final Map<WorkerRank, RankWriter> writers = new ConcurrentHashMap<>();

  private final Map<Long, CompletableFuture<Void>> stopping = new ConcurrentHashMap<>();
  private final Map<WorkerRank, AtomicLong> malformed = new ConcurrentHashMap<>();
  private final LongAdder appliedBlocks = new LongAdder();
  private final LongAdder batches = new LongAdder();

  /**
   * Payload bytes held in all writers at most: an eighth of the heap, 256 MiB at most; deliveries
   * past it are dropped and counted.
   */
  public static final long HOLD_LIMIT_BYTES =
      Math.min(256L << 20, Runtime.getRuntime().maxMemory() / 8);

  private final Object holdLock = new Object();

  /** Guarded by {@link #holdLock}. */
  private boolean holding;

  private final AtomicLong heldBytes = new AtomicLong();
  private final AtomicLong heldDropped = new AtomicLong();

  /** What a {@link #release} applied: deliveries held and applied, and those dropped past the limit. */
  public record HoldOutcome(long applied, long dropped) {}

  /**
   * Subscribes through {@code ingest} (built with {@link #UNSUBSCRIBED} as its default sink and
   * {@code shards}' {@link ShardWriters#flush} after each round), with a writer of its own for
   * every rank, whose writes go to the index shards through {@code shards}.
   */
  public KvEventsCoordinator(SelectionService service, KvEventIngest ingest, ShardWriters shards) {
    this.service = service;
    this.ingest = ingest;
    this.shards = shards;
  }

  ShardWriters shards() {
    return shards;
  }

  @Override
  public void workerUpserted(WorkerRecord previous, WorkerRecord current) {
    RankTarget old = targets.get(current.workerId());
    RankTarget next = current.schedulable() ? target(current) : null;
    List<CompletableFuture<Void>> stops = new ArrayList<>();
    if (old != null) {
      for (int i = 0; i < old.rankCount(); i++) {
        int r = old.firstRank() + i;
        if (!old.sameListener(next, r)) {
          stops.add(retire(old, r));
        }
      }
    }
    if (next == null) {
      targets.remove(current.workerId());
    } else {
      targets.put(current.workerId(), next);
      for (int i = 0; i < next.rankCount(); i++) {
        int r = next.firstRank() + i;
        if (!next.sameListener(old, r)) {
          start(next, r);
        }
      }
    }
    track(current.workerId(), stops);
  }

  @Override
  public void workerRemoved(WorkerRecord removed) {
    RankTarget old = targets.remove(removed.workerId());
    if (old == null) {
      return;
    }
    List<CompletableFuture<Void>> stops = new ArrayList<>();
    for (int i = 0; i < old.rankCount(); i++) {
      stops.add(retire(old, old.firstRank() + i));
    }
    track(removed.workerId(), stops);
  }

  /**
   * On rank {@code r}'s owner thread: close its socket, then drop its writer and its blocks. Work
   * posted there afterwards (a new subscription of the rank) runs after this.
   */
  private CompletableFuture<Void> retire(RankTarget old, int r) {
    WorkerRank rank = new WorkerRank(old.workerId(), r);
    RankWriter writer = writers.get(rank);
    int shard = old.shardOf(rank);
    CompletableFuture<Void> removed = new CompletableFuture<>();
    CompletableFuture<Void> closed =
        ingest.unsubscribe(
            rank,
            shard,
            () -> {
              if (writer != null) {
                writer.open = false;
                writers.remove(rank, writer);
              }
              if (old.index() == null) {
                removed.complete(null);
              } else if (ingest.isOwnerThread(shard)) {
                // after every batch the closed socket had delivered: the shard applies them first
                shards.submit(shard, new ShardCommand.RemoveRank(old.index(), rank));
                shards.barrier(shard).whenComplete((v, e) -> removed.complete(null));
              } else {
                old.index()
                    .removeRank(rank); // the poller has stopped: nothing is delivered any more
                removed.complete(null);
              }
            });
    return closed.thenCompose(v -> removed);
  }

  private void start(RankTarget next, int r) {
    WorkerRank rank = new WorkerRank(next.workerId(), r);
    if (next.index() == null) {
      return;
    }
    RankWriter writer;
    synchronized (holdLock) {
      writer = new RankWriter(this, next, rank, holding);
      writers.put(rank, writer);
    }
    try {
      ingest.subscribe(rank, writer.shard, next.endpoints().get(r), next.replayEndpoint(), writer);
    } catch (RuntimeException e) {
      LOG.error("rank {}: cannot subscribe to {}", rank, next.endpoints().get(r), e);
    }
  }

  private void track(long workerId, List<CompletableFuture<Void>> stops) {
    if (stops.isEmpty()) {
      return;
    }
    CompletableFuture<Void> all = CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new));
    CompletableFuture<Void> pending = stopping.merge(workerId, all, CompletableFuture::allOf);
    pending.whenComplete((v, e) -> stopping.remove(workerId, pending));
  }

  /** Completes once every listener stopped for {@code workerId} is closed and its blocks are gone. */
  public CompletableFuture<Void> settled(long workerId) {
    CompletableFuture<Void> f = stopping.get(workerId);
    return f == null ? CompletableFuture.completedFuture(null) : f;
  }

  /**
   * Runs {@code task} with the current writer of {@code rank} on that rank's owner thread (inline
   * when already there), provided the writer writes the same index as {@code from} and is still
   * open when the task runs. False when the rank has no such writer.
   */
  boolean onOwner(WorkerRank rank, RankTarget from, Consumer<RankWriter> task) {
    RankWriter w = writers.get(rank);
    if (w == null || w.target.index() != from.index()) {
      return false;
    }
    Runnable guarded =
        () -> {
          if (w.open) {
            task.accept(w);
          }
        };
    if (ingest.isOwnerThread(w.shard)) {
      guarded.run();
      return true;
    }
    return ingest.execute(w.shard, guarded);
  }

  /**
   * From now until {@link #release}, every writer (existing or opened later) holds its deliveries
   * instead of applying them. Any thread. Completes once every writer that existed already holds.
   */
  public CompletableFuture<Void> hold() {
    List<RankWriter> ws;
    synchronized (holdLock) {
      if (holding) {
        return CompletableFuture.completedFuture(null);
      }
      holding = true;
      heldDropped.set(0);
      ws = new ArrayList<>(writers.values());
    }
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (RankWriter w : ws) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      done.add(f);
      if (!runOnOwner(
          w,
          () -> {
            w.startHolding();
            // complete once the shard has applied what was handed to it before the hold
            shards.barrier(w.shard).whenComplete((v, e) -> f.complete(null));
          })) {
        f.complete(null);
      }
    }
    return CompletableFuture.allOf(done.toArray(CompletableFuture[]::new));
  }

  /**
   * Stops holding: each writer applies what it held, in order, on its owner thread. Completes when
   * every writer has. Any thread; a release without a hold completes at once with nothing applied.
   */
  public CompletableFuture<HoldOutcome> release() {
    List<RankWriter> ws;
    synchronized (holdLock) {
      if (!holding) {
        return CompletableFuture.completedFuture(new HoldOutcome(0, 0));
      }
      holding = false;
      ws = new ArrayList<>(writers.values());
    }
    LongAdder applied = new LongAdder();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (RankWriter w : ws) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      done.add(f);
      if (!runOnOwner(
          w,
          () -> {
            try {
              applied.add(w.release());
            } finally {
              // complete once the shard has applied the released deliveries
              shards.barrier(w.shard).whenComplete((v, e) -> f.complete(null));
            }
          })) {
        f.complete(null);
      }
    }
    return CompletableFuture.allOf(done.toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              heldBytes.set(0); // a writer retired while holding took its share with it
              return new HoldOutcome(applied.sum(), heldDropped.get());
            });
  }

  /**
   * Any thread: how many ranks with a writer have no live connection to their publisher yet (not
   * subscribed yet, or not connected). A joiner waits for 0 before asking a peer for its snapshot.
   */
  public int unconnectedRanks() {
    Map<WorkerRank, RankStats> subscribed = ingest.stats();
    Map<WorkerRank, Long> down = ingest.unreachableSince();
    int n = 0;
    for (WorkerRank r : writers.keySet()) {
      if (!subscribed.containsKey(r) || down.containsKey(r)) {
        n++;
      }
    }
    return n;
  }

  /**
   * Any thread: how many ranks with a writer have not delivered a batch yet (none received since
   * they were subscribed). A batch received proves the subscription reached the publisher.
   */
  public int ranksWithoutBatch() {
    Map<WorkerRank, RankStats> subscribed = ingest.stats();
    int n = 0;
    for (WorkerRank r : writers.keySet()) {
      RankStats st = subscribed.get(r);
      if (st == null || st.batches() == 0) {
        n++;
      }
    }
    return n;
  }

  /** Whether a held delivery of {@code bytes} fits under the limit; counts it either way. */
  boolean admitHeld(int bytes) {
    if (heldBytes.addAndGet(bytes) > HOLD_LIMIT_BYTES) {
      heldBytes.addAndGet(-bytes);
      if (heldDropped.incrementAndGet() == 1) {
        LOG.warn(
            "more than {} MiB of KV events held while copying a peer's index; dropping the rest "
                + "(those events are lost on this node, as without holding)",
            HOLD_LIMIT_BYTES >> 20);
      }
      return false;
    }
    return true;
  }

  void releasedHeld(int bytes) {
    heldBytes.addAndGet(-bytes);
  }

  private boolean runOnOwner(RankWriter w, Runnable task) {
    if (ingest.isOwnerThread(w.shard)) {
      task.run();
      return true;
    }
    return ingest.execute(w.shard, task);
  }

  void countMalformed(WorkerRank rank) {
    malformed.computeIfAbsent(rank, k -> new AtomicLong()).incrementAndGet();
  }

  void countApplied(long blocks) {
    appliedBlocks.add(blocks);
    batches.increment();
  }

  private RankTarget target(WorkerRecord w) {
    var s = w.spec();
    Map<Integer, String> endpoints = new HashMap<>();
    for (WorkerRank r : w.ranks()) {
      endpoints.put(r.dpRank(), s.kvEventsEndpointFor(r.dpRank()));
    }
    return new RankTarget(
        w.workerId(),
        service.eventIndex(s.partition()),
        s.blockSize(),
        s.isEagle(),
        s.dataParallelStartRank(),
        s.dataParallelSize(),
        Map.copyOf(endpoints),
        s.replayEndpoint());
  }

  /** Per-rank listener state, ordered by rank. */
  public Map<WorkerRank, RankStats> stats() {
    return ingest.stats();
  }

  /** Ranks without a connection to their publisher, with the {@code nanoTime} since when ({@link KvEventIngest#unreachableSince}). */
  public Map<WorkerRank, Long> unreachableSince() {
    return ingest.unreachableSince();
  }

  public long malformedPayloads(WorkerRank rank) {
    AtomicLong n = malformed.get(rank);
    return n == null ? 0 : n.get();
  }

  /** Blocks stored or removed through events since start (for metrics and benchmarks). */
  public long appliedBlocks() {
    return appliedBlocks.sum();
  }

  public long batches() {
    return batches.sum();
  }
}
