package io.kvselect.server.events;

import io.kvselect.core.events.ApplyStats;
import io.kvselect.core.events.EventApplier;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.events.KvEventDecoder;
import io.kvselect.core.events.MalformedEventException;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import java.util.ArrayDeque;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink of one rank's subscription: decodes its batches on the shard's owner thread (the poller
 * the subscription runs on) and hands them, and its resets, to the index shard the rank lives on
 * ({@link ShardWriters}; the shard's {@link IndexShardVerticle} applies them in that order). Bound
 * to the registration it was opened for ({@link RankTarget}): batches of an old
 * registration never reach a newer one's index.
 *
 * <p>Writes for another rank stay on that rank's owner: a batch stamped with another DP rank of
 * the worker, and the per-rank removals that an {@code AllBlocksCleared} means for the worker's
 * other ranks, are handed to the other rank's writer on its own thread
 * ({@link KvEventsCoordinator#onOwner}).
 *
 * <p>Threading: every method runs on the owner thread of {@link #shard}, except
 * {@link #applyOnShard}, which the shard's verticle runs (it reads only final fields); {@link #open}
 * is cleared on the owner thread when the subscription is closed and its removal submitted, so
 * work handed over afterwards is dropped.
 */
final class RankWriter implements BatchSink {

  private static final Logger LOG = LoggerFactory.getLogger(RankWriter.class);

  final RankTarget target;
  final WorkerRank rank;
  final int shard;

  /** Owner thread; true from construction (before the writer is published) until closed. */
  boolean open = true;

  private final KvEventsCoordinator coordinator;
  private final BlockIndex scoped = new OwnerScoped();

  /**
   * Owner thread: the deliveries held, in order, while the node copies a peer's index
   * ({@link KvEventsCoordinator#hold}); null when not holding. Set at construction (before the
   * writer is published) or by {@link #startHolding}, cleared by {@link #release}.
   */
  private ArrayDeque<Held> held;

  /** A held delivery: a batch, or a reset when {@code resetReason} is set. */
  private record Held(long seq, byte[] payload, String resetReason) {}

  RankWriter(KvEventsCoordinator coordinator, RankTarget target, WorkerRank rank, boolean holding) {
    this.coordinator = coordinator;
    this.target = target;
    this.rank = rank;
    this.shard = target.shardOf(rank);
    this.held = holding ? new ArrayDeque<>() : null;
  }

  @Override
  public void onBatch(WorkerRank from, long seq, byte[] payload) {
    if (!open) {
      return;
    }
    if (held != null) {
      if (coordinator.admitHeld(payload.length)) {
        held.add(new Held(seq, payload, null));
      }
      return;
    }
    write(seq, payload);
  }

  /** Owner thread: starts holding (a writer opened before {@link KvEventsCoordinator#hold}). */
  void startHolding() {
    if (held == null) {
      held = new ArrayDeque<>();
    }
  }

  /**
   * Owner thread: applies what was held, in order, and stops holding; later deliveries are
   * applied as they come. Returns the deliveries applied.
   */
  long release() {
    ArrayDeque<Held> h = held;
    held = null;
    if (h == null || !open) {
      return 0;
    }
    long n = 0;
    for (Held d : h) {
      coordinator.releasedHeld(d.payload() == null ? 0 : d.payload().length);
      if (d.resetReason() != null) {
        onReset(rank, d.resetReason());
      } else {
        write(d.seq(), d.payload());
      }
      n++;
    }
    return n;
  }

  private void write(long seq, byte[] payload) {
    KvEventBatch batch;
    try {
      batch = KvEventDecoder.decode(payload);
    } catch (MalformedEventException e) {
      coordinator.countMalformed(rank);
      LOG.debug("dropped malformed batch {} of {}: {}", seq, rank, e.getMessage());
      return;
    }
    Integer stamped = batch.dpRank();
    if (stamped == null || stamped == rank.dpRank()) {
      apply(batch);
      return;
    }
    if (!target.hasRank(stamped)) {
      coordinator.countMalformed(rank);
      return;
    }
    boolean handed =
        coordinator.onOwner(
            new WorkerRank(rank.workerId(), stamped), target, other -> other.apply(batch));
    if (!handed) {
      coordinator.countMalformed(rank);
    }
  }

  @Override
  public void onReset(WorkerRank from, String reason) {
    if (open && held != null) {
      held.add(new Held(-1, null, reason));
    } else if (open) {
      LOG.info("dropping the blocks of {}: {}", rank, reason);
      coordinator.shards().submit(shard, new ShardCommand.RemoveRank(target.index(), rank));
    }
  }

  /** Owner thread: hands a decoded batch of this rank to its shard. */
  void apply(KvEventBatch batch) {
    if (open) {
      coordinator.shards().submit(shard, new ShardCommand.Apply(this, batch));
    }
  }

  /** The shard's verticle: applies a decoded batch of this rank to the index. */
  void applyOnShard(KvEventBatch batch) {
    ApplyStats stats = EventApplier.apply(scoped, rank, target.blockSize(), target.eagle(), batch);
    coordinator.countApplied(stats.storedBlocks() + stats.removedBlocks());
  }

  /** Owner thread: drops this rank's blocks (one rank's share of an {@code AllBlocksCleared}). */
  void removeBlocks() {
    if (open) {
      coordinator.shards().submit(shard, new ShardCommand.RemoveRank(target.index(), rank));
    }
  }

  /**
   * The index as this rank's events see it, on the shard's verticle: writes of this rank pass
   * through; clearing the worker removes this rank here and hands each other rank's removal to
   * that rank's owner thread (which submits it to the other rank's shard).
   */
  private final class OwnerScoped implements BlockIndex {

    @Override
    public boolean store(
        WorkerRank r,
        StorageTier tier,
        boolean hasParent,
        long parentExternalHash,
        long[] externalHashes,
        long[] localHashes) {
      return target
          .index()
          .store(r, tier, hasParent, parentExternalHash, externalHashes, localHashes);
    }

    @Override
    public void remove(WorkerRank r, StorageTier tier, long[] externalHashes) {
      target.index().remove(r, tier, externalHashes);
    }

    @Override
    public void clearWorker(long workerId) {
      for (int i = 0; i < target.rankCount(); i++) {
        WorkerRank r = new WorkerRank(workerId, target.firstRank() + i);
        if (r.equals(rank)) {
          target.index().removeRank(r);
        } else {
          coordinator.onOwner(r, target, RankWriter::removeBlocks);
        }
      }
    }

    @Override
    public void removeRank(WorkerRank r) {
      target.index().removeRank(r);
    }

    @Override
    public OverlapScores findMatches(long[] localHashes) {
      return target.index().findMatches(localHashes);
    }

    @Override
    public long[] externalHashes(WorkerRank r, long[] localHashes, int depth) {
      return target.index().externalHashes(r, localHashes, depth);
    }

    @Override
    public long size() {
      return target.index().size();
    }

    @Override
    public List<StoredBlock> dump() {
      return target.index().dump();
    }
  }
}
