package io.kvselect.core.index;

import java.util.HashMap;
import java.util.Map;

/**
 * Merges the scores of a primary index with those of a predicted-TTL side index, as Dynamo does
 * when {@code router_predicted_ttl_secs} is set: per rank, the device depth is the max of both.
 *
 * <p>The side index only records device blocks, so lower-tier extensions come from the primary.
 * They keep their cumulative boundaries: if the side raises the device depth to {@code D}, each
 * tier's extension is whatever part of its primary range lies beyond {@code D} (so the total is
 * {@code max(primary total, D)}). Stateless and thread-safe; O(ranks of both inputs).
 */
public final class OverlapMerge {

  private OverlapMerge() {}

  /** Per-rank max of device depth; see the class comment for the lower tiers. */
  public static OverlapScores maxDevice(OverlapScores primary, OverlapScores side) {
    if (side.isEmpty()) {
      return primary;
    }
    if (primary.isEmpty()) {
      return side;
    }
    Map<WorkerRank, RankOverlap> out = new HashMap<>((primary.size() + side.size()) * 4 / 3 + 1);
    primary.forEach(out::put);
    side.forEach((rank, s) -> out.merge(rank, s, OverlapMerge::merge));
    return new OverlapScores(out);
  }

  private static RankOverlap merge(RankOverlap p, RankOverlap s) {
    int d = Math.max(p.device(), s.device());
    if (d == p.device()) {
      return p;
    }
    int c1 = Math.max(p.device() + p.hostExtension(), d);
    int c2 = Math.max(c1, p.device() + p.hostExtension() + p.diskExtension());
    int c3 = Math.max(c2, p.totalBlocks());
    return new RankOverlap(d, c1 - d, c2 - c1, c3 - c2);
  }
}
