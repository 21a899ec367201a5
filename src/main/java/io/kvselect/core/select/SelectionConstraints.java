package io.kvselect.core.select;

import io.kvselect.core.index.WorkerRank;
import java.util.Set;

/**
 * What a request allows and prefers, for the filter stage: explicit eligibility
 * ({@code allowed_worker_ids}, {@code required_taints}), a hard target ({@code pinned_worker} wins
 * over {@code affinity_target}; a target's {@code dpRank < 0} means any rank of that worker), and
 * the soft target of a session binding.
 */
public record SelectionConstraints(
    long[] allowedWorkerIds,
    Set<String> requiredTaints,
    WorkerRank pinnedWorker,
    WorkerRank affinityTarget,
    WorkerRank sessionBound) {

  public SelectionConstraints {
    requiredTaints = requiredTaints == null ? Set.of() : requiredTaints;
  }

  /** The hard target, if any: the pinned worker, else the affinity target. */
  public WorkerRank hardTarget() {
    return pinnedWorker != null ? pinnedWorker : affinityTarget;
  }

  public SelectionConstraints withSessionBound(WorkerRank bound) {
    return new SelectionConstraints(
        allowedWorkerIds, requiredTaints, pinnedWorker, affinityTarget, bound);
  }
}
