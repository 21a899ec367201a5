package io.kvselect.core.select;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.WorkerRank;
import java.util.List;
import java.util.Map;

/**
 * The schedulable ranks of one partition as the filter stage sees them: an immutable snapshot
 * taken when the catalog last changed, safe to share between threads.
 *
 * @param partition the partition, for error messages
 * @param ranks every schedulable rank, sorted
 * @param workers the schedulable workers by id
 */
public record CandidatePool(
    PartitionKey partition, List<WorkerRank> ranks, Map<Long, WorkerRecord> workers) {

  public CandidatePool {
    ranks = List.copyOf(ranks);
    workers = Map.copyOf(workers);
  }

  /** The schedulable record of {@code workerId}, or null. */
  public WorkerRecord worker(long workerId) {
    return workers.get(workerId);
  }
}
