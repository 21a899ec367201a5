package io.kvselect.core.index;

/**
 * One data-parallel rank of a worker: the unit the index and the load accounting score.
 * {@code dpRank} is the global DP rank ({@code data_parallel_start_rank .. start + size}).
 * Ordered by (workerId, dpRank), which is the order every listing uses.
 */
public record WorkerRank(long workerId, int dpRank) implements Comparable<WorkerRank> {

  @Override
  public int compareTo(WorkerRank o) {
    int c = Long.compareUnsigned(workerId, o.workerId);
    return c != 0 ? c : Integer.compare(dpRank, o.dpRank);
  }

  @Override
  public String toString() {
    return workerId + ":" + dpRank;
  }
}
