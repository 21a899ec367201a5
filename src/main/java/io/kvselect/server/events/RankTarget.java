package io.kvselect.server.events;

import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.WorkerRank;
import java.util.Map;
import java.util.Objects;

/** What a worker's ranks' batches are applied to ({@link KvEventsCoordinator}), replaced whenever its registration changes. Immutable. */
record RankTarget(
    long workerId,
    BlockIndex index,
    int blockSize,
    boolean eagle,
    int firstRank,
    int rankCount,
    Map<Integer, String> endpoints,
    String replayEndpoint) {

  boolean hasRank(int r) {
    return r >= firstRank && r < firstRank + rankCount;
  }

  /** The index shard of {@code rank}: its {@link ShardedBlockIndex} shard, 0 for an unsharded index. */
  int shardOf(WorkerRank rank) {
    return index.shardOf(rank);
  }

  /** Whether rank {@code r}'s listener of {@code this} registration serves {@code other} unchanged. */
  boolean sameListener(RankTarget other, int r) {
    return other != null
        && other.index == index
        && hasRank(r)
        && other.hasRank(r)
        && Objects.equals(endpoints.get(r), other.endpoints.get(r))
        && Objects.equals(replayEndpoint, other.replayEndpoint);
  }
}
