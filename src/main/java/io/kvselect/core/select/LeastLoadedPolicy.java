package io.kvselect.core.select;

import java.util.Comparator;
import java.util.List;

/**
 * {@code least_loaded}: the candidate with the fewest active requests, then the fewest potential
 * decode blocks, then the fewest active prefill tokens; the earlier candidate (rank order) wins
 * exact ties. Stateless; O(candidates).
 */
public final class LeastLoadedPolicy implements SelectionPolicy {

  public static final String NAME = "least_loaded";

  @Override
  public String name() {
    return NAME;
  }

  /** Fewest active requests, then potential decode blocks, then active prefill tokens. */
  static final Comparator<Candidate> LOAD =
      Comparator.comparingInt(Candidate::activeRequests)
          .thenComparingLong(Candidate::potentialDecodeBlocks)
          .thenComparingLong(Candidate::activePrefillTokens);

  @Override
  public int choose(List<Candidate> candidates, PolicyContext ctx) {
    return leastLoaded(candidates);
  }

  /** By the same load order as {@link #choose}. */
  @Override
  public int[] rankOthers(List<Candidate> candidates, int chosen, PolicyContext ctx) {
    return FallbackOrder.by(candidates, chosen, LOAD);
  }

  /** The index of the least-loaded candidate (see the class comment). */
  static int leastLoaded(List<Candidate> candidates) {
    int best = 0;
    for (int i = 1; i < candidates.size(); i++) {
      Candidate a = candidates.get(i);
      Candidate b = candidates.get(best);
      int c = Integer.compare(a.activeRequests(), b.activeRequests());
      if (c == 0) {
        c = Long.compare(a.potentialDecodeBlocks(), b.potentialDecodeBlocks());
      }
      if (c == 0) {
        c = Long.compare(a.activePrefillTokens(), b.activePrefillTokens());
      }
      if (c < 0) {
        best = i;
      }
    }
    return best;
  }
}
