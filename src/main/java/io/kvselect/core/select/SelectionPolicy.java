package io.kvselect.core.select;

import java.util.List;

/**
 * The score and pick stages of the selection pipeline: given the filtered candidates of one
 * request, each with its overlap and load, chooses one. Implementations are stateless or own
 * their state behind their own synchronization (they are called concurrently, one call per
 * request, under the request's partition lock); a policy never books anything itself.
 *
 * <p>The pipeline is {@link CandidateFilter}s, then this; a new policy (the KVC-Router,
 * round-robin, least-loaded) is a new implementation chosen per partition, not an edit of
 * {@link KvCostPolicy}.
 */
public interface SelectionPolicy {

  /** The policy's configuration name ({@code kv}, ...). */
  String name();

  /**
   * The index in {@code candidates} (non-empty, in rank order) of the chosen candidate.
   */
  int choose(List<Candidate> candidates, PolicyContext ctx);

  /**
   * The candidates other than {@code chosen} (an index {@link #choose} returned) in the order this
   * policy would take them for the same request, best first, as indices into {@code candidates}:
   * the fallbacks a caller lists after the choice. It changes no state of the policy. The default,
   * for a policy without a cost, is rank order.
   */
  default int[] rankOthers(List<Candidate> candidates, int chosen, PolicyContext ctx) {
    return FallbackOrder.inRankOrder(candidates.size(), chosen);
  }
}
