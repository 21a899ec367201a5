package io.kvselect.core.config;

import java.util.Collection;

/**
 * The "did you mean" of every misspelled name kvselect reports (environment variables, worker
 * fields): the candidate nearest by Levenshtein distance, when it is near enough to be a typo.
 * Stateless; {@code O(|candidates| * |name| * |candidate|)}.
 */
public final class NearestName {

  private NearestName() {}

  /**
   * The candidate nearest to {@code name}, or null when none is within a third of its length (at
   * least 2 edits); ties go to the first in iteration order.
   */
  public static String closest(String name, Collection<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String k : candidates) {
      int d = distance(name, k);
      if (d < bestDistance) {
        bestDistance = d;
        best = k;
      }
    }
    return bestDistance <= Math.max(2, name.length() / 3) ? best : null;
  }

  /** Levenshtein distance. */
  public static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
