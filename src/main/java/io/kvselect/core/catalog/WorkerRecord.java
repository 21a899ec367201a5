package io.kvselect.core.catalog;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.List;

/**
 * A catalog entry: the registration plus its lifecycle and, when not schedulable, the reasons.
 * Immutable; the registry replaces it on every change.
 */
public record WorkerRecord(
    WorkerSpec spec, Lifecycle lifecycle, List<String> notSchedulableReasons) {

  public WorkerRecord {
    notSchedulableReasons = List.copyOf(notSchedulableReasons);
  }

  public long workerId() {
    return spec.workerId();
  }

  public boolean schedulable() {
    return lifecycle == Lifecycle.SCHEDULABLE;
  }

  /** The worker's global DP ranks, in order. */
  public List<WorkerRank> ranks() {
    List<WorkerRank> out = new ArrayList<>(Math.max(spec.dataParallelSize(), 0));
    for (int i = 0; i < spec.dataParallelSize(); i++) {
      out.add(new WorkerRank(spec.workerId(), spec.dataParallelStartRank() + i));
    }
    return out;
  }

  public boolean hasRank(int dpRank) {
    return dpRank >= spec.dataParallelStartRank()
        && dpRank < spec.dataParallelStartRank() + spec.dataParallelSize();
  }

  public WorkerRecord withLifecycle(Lifecycle l) {
    return new WorkerRecord(
        spec, l, l == Lifecycle.SCHEDULABLE ? List.of() : notSchedulableReasons);
  }
}
