package io.kvselect.core.select;

import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import java.util.Objects;

/**
 * One eligible rank as seen by {@link CostFunction}: its tiered prefix overlap and its projected
 * load (Dynamo's {@code WorkerLoadProjection}).
 *
 * <p>Invariants: counts are non-negative. {@code hasLoadRow == false} means the load tracker has
 * no row for the rank (never booked); its load fields must then be zero, as Dynamo reads a default
 * projection, and its raw prefill is charged as the plain ISL. {@code preferredTaintWeight} is the
 * sum of the request's preferred-taint weights the rank matches (0 when none match, which leaves
 * the logit unchanged).
 *
 * @param rank the scored rank
 * @param overlap tiered overlap of the request prefix on this rank
 * @param hasLoadRow whether the load tracker has a row for the rank
 * @param activePrefillTokens prefill tokens admitted but not yet complete on the rank
 * @param potentialDecodeBlocks active decode blocks plus the blocks this request would add
 * @param activeRequests requests currently active on the rank
 * @param preferredTaintWeight sum of matched preferred-taint weights
 */
public record Candidate(
    WorkerRank rank,
    RankOverlap overlap,
    boolean hasLoadRow,
    long activePrefillTokens,
    long potentialDecodeBlocks,
    int activeRequests,
    double preferredTaintWeight) {

  public Candidate {
    Objects.requireNonNull(rank, "rank");
    Objects.requireNonNull(overlap, "overlap");
    if (activePrefillTokens < 0 || potentialDecodeBlocks < 0 || activeRequests < 0) {
      throw new IllegalArgumentException("load counts must be >= 0 for rank " + rank);
    }
    if (!hasLoadRow && (activePrefillTokens | potentialDecodeBlocks | activeRequests) != 0) {
      throw new IllegalArgumentException("rank " + rank + " has no load row but non-zero load");
    }
  }

  /** A rank with no load row and no preferred taints. */
  public static Candidate unloaded(WorkerRank rank, RankOverlap overlap) {
    return new Candidate(rank, overlap, false, 0, 0, 0, 0.0);
  }
}
