package io.kvselect.core.select;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.List;

/**
 * Narrows the candidates to a preferred target. A hard target ({@code pinned_worker}, else
 * {@code affinity_target}) must exist (404) and be eligible (503). A session binding is soft: it
 * narrows to the bound rank when that rank is still a candidate, and is ignored otherwise (the
 * booking then re-binds the session).
 */
public final class TargetFilter implements CandidateFilter {

  @Override
  public List<WorkerRank> apply(List<WorkerRank> in, CandidatePool pool, SelectionConstraints c) {
    WorkerRank target = c.hardTarget();
    if (target != null) {
      List<WorkerRank> out = matching(pool, target);
      if (out.isEmpty()) {
        throw SelectionException.notFound(
            "schedulable worker "
                + Long.toUnsignedString(target.workerId())
                + (target.dpRank() >= 0 ? " (dp_rank " + target.dpRank() + ")" : "")
                + " not found for "
                + pool.partition());
      }
      out.retainAll(in);
      if (out.isEmpty()) {
        throw SelectionException.notReady(
            "worker "
                + Long.toUnsignedString(target.workerId())
                + " is not eligible: filtered out by allowed_worker_ids or required_taints");
      }
      return out;
    }
    if (c.sessionBound() != null) {
      List<WorkerRank> out = matching(pool, c.sessionBound());
      out.retainAll(in);
      if (!out.isEmpty()) {
        return out;
      }
    }
    return in;
  }

  /** The schedulable ranks of the target's worker that match its DP rank (any when negative). */
  static List<WorkerRank> matching(CandidatePool pool, WorkerRank target) {
    List<WorkerRank> out = new ArrayList<>();
    WorkerRecord w = pool.worker(target.workerId());
    if (w != null) {
      for (WorkerRank r : w.ranks()) {
        if (target.dpRank() < 0 || target.dpRank() == r.dpRank()) {
          out.add(r);
        }
      }
    }
    return out;
  }
}
