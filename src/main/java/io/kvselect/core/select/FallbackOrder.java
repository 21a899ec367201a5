package io.kvselect.core.select;

import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Orders of the candidates a policy did not choose, for {@link SelectionPolicy#rankOthers}: by a
 * cost (lower first) or by a comparator, the earlier candidate (rank order) first on ties; the
 * chosen index is left out. Stateless; O(n log n).
 */
final class FallbackOrder {

  private FallbackOrder() {}

  /** Indices of {@code [0, n)} but {@code chosen}, in rank order. */
  static int[] inRankOrder(int n, int chosen) {
    return IntStream.range(0, n).filter(i -> i != chosen).toArray();
  }

  /** Indices of {@code costs} but {@code chosen}, by ascending cost. */
  static int[] byCost(double[] costs, int chosen) {
    return IntStream.range(0, costs.length)
        .filter(i -> i != chosen)
        .boxed()
        .sorted(Comparator.comparingDouble(i -> costs[i]))
        .mapToInt(Integer::intValue)
        .toArray();
  }

  /** Indices of {@code candidates} but {@code chosen}, by {@code order} (a stable sort). */
  static int[] by(List<Candidate> candidates, int chosen, Comparator<Candidate> order) {
    return IntStream.range(0, candidates.size())
        .filter(i -> i != chosen)
        .boxed()
        .sorted(Comparator.comparing(candidates::get, order))
        .mapToInt(Integer::intValue)
        .toArray();
  }
}
