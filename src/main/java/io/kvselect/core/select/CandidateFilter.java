package io.kvselect.core.select;

import io.kvselect.core.index.WorkerRank;
import java.util.List;

/**
 * The filter stage of the selection pipeline: narrows the ranks a request may land on. Filters
 * run in order, each on the previous one's output; a filter that leaves nothing acceptable fails
 * with a {@link io.kvselect.core.error.SelectionException} saying why. Stateless and thread-safe.
 */
@FunctionalInterface
public interface CandidateFilter {

  /** The ranks of {@code in} that stay candidates (never empty: fail instead). */
  List<WorkerRank> apply(List<WorkerRank> in, CandidatePool pool, SelectionConstraints constraints);
}
