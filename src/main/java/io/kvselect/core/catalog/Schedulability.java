package io.kvselect.core.catalog;

import io.kvselect.core.config.RouterConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * Decides whether a registration is complete enough to schedule, with Dynamo's reason texts. A
 * worker with reasons is still accepted into the catalog as {@link Lifecycle#INCOMPLETE}.
 */
public final class Schedulability {

  /**
   * Appended to Dynamo's "kv_events endpoint is required" reason (its text kept as the prefix) so
   * the reason names the JSON fields that supply the endpoint.
   */
  static final String KV_EVENTS_FIELDS =
      " (set kv_events_endpoint, or kv_events_endpoints for each rank)";

  private Schedulability() {}

  /**
   * The reasons {@code spec} cannot be scheduled (empty when it can).
   *
   * @param partitionBlockSize the block size the partition already uses, or null when the worker
   *     would be its first schedulable member
   */
  public static List<String> reasons(
      WorkerSpec spec, RouterConfig cfg, Integer partitionBlockSize, Boolean partitionEagle) {
    List<String> reasons = new ArrayList<>();
    if (spec.endpoint() == null || spec.endpoint().isBlank()) {
      reasons.add("endpoint is required");
    }
    if (spec.blockSize() == null) {
      reasons.add("block_size is required");
    } else if (spec.blockSize() <= 0) {
      reasons.add("block_size must be greater than 0");
    }
    if (spec.dataParallelSize() <= 0) {
      reasons.add("data_parallel_size must be greater than 0");
    }
    if (cfg.queueingEnabled() && spec.maxNumBatchedTokens() == null) {
      reasons.add("max_num_batched_tokens is required while queueing is enabled");
    }
    if (spec.replayEndpoint() != null && spec.dataParallelSize() > 1) {
      reasons.add("replay_endpoint is only supported when data_parallel_size is 1");
    }
    if (cfg.index().useKvEvents() && cfg.cost().overlapScoreCredit() > 0) {
      for (int i = 0; i < spec.dataParallelSize(); i++) {
        int rank = spec.dataParallelStartRank() + i;
        String e = spec.kvEventsEndpointFor(rank);
        if (e == null || e.isBlank()) {
          reasons.add("kv_events endpoint is required for dp_rank " + rank + KV_EVENTS_FIELDS);
        }
      }
    }
    if (reasons.isEmpty()
        && partitionBlockSize != null
        && !partitionBlockSize.equals(spec.blockSize())) {
      reasons.add(
          "reconciliation failed: block_size mismatch for "
              + spec.partition()
              + " existing="
              + partitionBlockSize
              + " requested="
              + spec.blockSize());
    }
    if (reasons.isEmpty() && partitionEagle != null && partitionEagle != spec.isEagle()) {
      reasons.add(
          "reconciliation failed: is_eagle mismatch for "
              + spec.partition()
              + " existing="
              + partitionEagle
              + " requested="
              + spec.isEagle());
    }
    return reasons;
  }
}
