package io.kvselect.core.index;

import java.util.Collections;
import java.util.Map;

/**
 * Result of {@link BlockIndex#findMatches}: per rank, the tiered prefix depth. A rank that holds
 * no leading block of the query on any tier is absent.
 */
public record OverlapScores(Map<WorkerRank, RankOverlap> ranks) {

  public static final OverlapScores EMPTY = new OverlapScores(Collections.emptyMap());

  /** The overlap of {@code rank}, {@link RankOverlap#NONE} when absent. */
  public RankOverlap of(WorkerRank rank) {
    RankOverlap o = ranks.get(rank);
    return o == null ? RankOverlap.NONE : o;
  }
}
