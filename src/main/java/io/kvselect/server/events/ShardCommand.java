package io.kvselect.server.events;

import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.WorkerRank;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A write to one index shard, made by the shard's {@link IndexShardVerticle} in the order the
 * shard's owner poller submitted it ({@link ShardWriters}).
 */
sealed interface ShardCommand {

  /** Apply a decoded batch of the writer's rank (the writer's registration names index and block size). */
  record Apply(RankWriter writer, KvEventBatch batch) implements ShardCommand {}

  /** Drop every block of {@code rank} from {@code index} (a reset, a cleared worker, a retired registration). */
  record RemoveRank(BlockIndex index, WorkerRank rank) implements ShardCommand {}

  /** Completes {@code done} once every command submitted before it has been applied. */
  record Barrier(CompletableFuture<Void> done) implements ShardCommand {}

  /** One poll round's commands for shard {@code shard}: the body of a message to {@code kvselect.index.shard.<shard>}. */
  record Round(int shard, List<ShardCommand> commands) {}
}
