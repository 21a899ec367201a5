package io.kvselect.core.select;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps the ranks whose worker is in {@code allowed_worker_ids} (when given) and carries every
 * {@code required_taints} entry; 503 when none does (Dynamo's "no eligible workers").
 */
public final class EligibilityFilter implements CandidateFilter {

  @Override
  public List<WorkerRank> apply(List<WorkerRank> in, CandidatePool pool, SelectionConstraints c) {
    if (c.allowedWorkerIds() == null && c.requiredTaints().isEmpty()) {
      return in;
    }
    List<WorkerRank> out = new ArrayList<>();
    for (WorkerRank r : in) {
      if (c.allowedWorkerIds() != null && !contains(c.allowedWorkerIds(), r.workerId())) {
        continue;
      }
      if (!pool.worker(r.workerId()).spec().taints().containsAll(c.requiredTaints())) {
        continue;
      }
      out.add(r);
    }
    if (out.isEmpty()) {
      throw SelectionException.notReady(
          "no eligible workers for "
              + pool.partition()
              + ": every schedulable worker was filtered out by allowed_worker_ids or required_taints");
    }
    return out;
  }

  private static boolean contains(long[] ids, long id) {
    for (long x : ids) {
      if (x == id) {
        return true;
      }
    }
    return false;
  }
}
