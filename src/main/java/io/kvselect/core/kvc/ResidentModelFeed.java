package io.kvselect.core.kvc;

import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import java.util.List;

/**
 * A partition's event index that also tells a {@link ResidentModel} what every rank stores and
 * removes on its device tier, so the built-in Admit learns what a decode worker holds from the
 * same KV events as the index (llm-d's way: a decorator over the index, the algorithm untouched).
 * Every call goes to the delegate first; a store the delegate rejects (an unknown parent) is not
 * reported.
 *
 * <p>Threading: as the delegate (its writers call in on their owner threads); the model
 * synchronizes itself and never calls back.
 */
public final class ResidentModelFeed implements BlockIndex {

  private final BlockIndex index;
  private final ResidentModel model;

  public ResidentModelFeed(BlockIndex index, ResidentModel model) {
    this.index = index;
    this.model = model;
  }

  /** The index this one wraps. */
  public BlockIndex delegate() {
    return index;
  }

  @Override
  public boolean store(
      WorkerRank rank,
      StorageTier tier,
      boolean hasParent,
      long parentExternalHash,
      long[] externalHashes,
      long[] localHashes) {
    boolean ok =
        index.store(rank, tier, hasParent, parentExternalHash, externalHashes, localHashes);
    if (ok && tier == StorageTier.DEVICE) {
      model.stored(rank, hasParent, parentExternalHash, externalHashes, localHashes);
    }
    return ok;
  }

  @Override
  public void remove(WorkerRank rank, StorageTier tier, long[] externalHashes) {
    index.remove(rank, tier, externalHashes);
    if (tier == StorageTier.DEVICE) {
      model.removed(rank, externalHashes);
    }
  }

  @Override
  public void clearWorker(long workerId) {
    index.clearWorker(workerId);
    model.clearedWorker(workerId);
  }

  @Override
  public void removeRank(WorkerRank rank) {
    index.removeRank(rank);
    model.clearedRank(rank);
  }

  @Override
  public int shardOf(WorkerRank rank) {
    return index.shardOf(rank);
  }

  @Override
  public ShardedBlockIndex sharded() {
    return index.sharded();
  }

  @Override
  public OverlapScores findMatches(long[] localHashes) {
    return index.findMatches(localHashes);
  }

  @Override
  public long[] externalHashes(WorkerRank rank, long[] localHashes, int depth) {
    return index.externalHashes(rank, localHashes, depth);
  }

  @Override
  public long size() {
    return index.size();
  }

  @Override
  public List<StoredBlock> dump() {
    return index.dump();
  }
}
