package io.kvselect.testing;

import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import java.util.List;

/**
 * A {@link BlockIndex} that passes every call to another one; tests override the calls they
 * observe or hold. Threading is the wrapped index's.
 */
public abstract class ForwardingBlockIndex implements BlockIndex {

  protected final BlockIndex inner;

  protected ForwardingBlockIndex(BlockIndex inner) {
    this.inner = inner;
  }

  @Override
  public boolean store(
      WorkerRank rank,
      StorageTier tier,
      boolean hasParent,
      long parentExternalHash,
      long[] externalHashes,
      long[] localHashes) {
    return inner.store(rank, tier, hasParent, parentExternalHash, externalHashes, localHashes);
  }

  @Override
  public void remove(WorkerRank rank, StorageTier tier, long[] externalHashes) {
    inner.remove(rank, tier, externalHashes);
  }

  @Override
  public void clearWorker(long workerId) {
    inner.clearWorker(workerId);
  }

  @Override
  public void removeRank(WorkerRank rank) {
    inner.removeRank(rank);
  }

  @Override
  public OverlapScores findMatches(long[] localHashes) {
    return inner.findMatches(localHashes);
  }

  @Override
  public long[] externalHashes(WorkerRank rank, long[] localHashes, int depth) {
    return inner.externalHashes(rank, localHashes, depth);
  }

  @Override
  public long size() {
    return inner.size();
  }

  @Override
  public List<StoredBlock> dump() {
    return inner.dump();
  }
}
