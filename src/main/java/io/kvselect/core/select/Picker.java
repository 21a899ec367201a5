package io.kvselect.core.select;

import java.util.random.RandomGenerator;

/**
 * Dynamo's default picker over candidate logits (lower is better).
 *
 * <ul>
 *   <li>{@code temperature == 0}: the minimum; ties are broken uniformly at random by reservoir
 *       sampling (the k-th tied index replaces the choice with probability 1/k).
 *   <li>{@code temperature > 0}: range-normalised softmax, {@code p_i ∝ exp(-(c_i - c_min) /
 *       ((c_max - c_min) * T))}, uniform when all costs are equal, sampled with one uniform draw
 *       by cumulative sum. The normalisation makes {@code T} independent of the logit scale: the
 *       best rank is {@code e^(1/T)} times likelier than the worst.
 * </ul>
 *
 * <p>Stateless; thread-safe as long as the caller's {@link RandomGenerator} is confined to the
 * calling thread. O(n), allocation-free.
 */
public final class Picker {

  private Picker() {}

  /** Picks an index of {@code logits}; see {@link #pick(double[], int, double, RandomGenerator)}. */
  public static int pick(double[] logits, double temperature, RandomGenerator rng) {
    return pick(logits, logits.length, temperature, rng);
  }

  /**
   * Picks an index in {@code [0, n)} of {@code logits}, whose first {@code n} slots hold the costs.
   *
   * @throws IllegalArgumentException if {@code n} is not in {@code [1, logits.length]}, the
   *     temperature is negative or NaN, or (softmax only) a logit is not finite
   */
  public static int pick(double[] logits, int n, double temperature, RandomGenerator rng) {
    if (n < 1 || n > logits.length) {
      throw new IllegalArgumentException("cannot pick from " + n + " candidates");
    }
    if (!(temperature >= 0.0)) {
      throw new IllegalArgumentException("temperature must be >= 0, got " + temperature);
    }
    return temperature == 0.0 ? minimum(logits, n, rng) : softmax(logits, n, temperature, rng);
  }

  private static int minimum(double[] logits, int n, RandomGenerator rng) {
    int best = 0;
    double bestCost = Double.POSITIVE_INFINITY;
    int ties = 0;
    for (int i = 0; i < n; i++) {
      double cost = logits[i];
      if (cost < bestCost) {
        best = i;
        bestCost = cost;
        ties = 1;
      } else if (cost == bestCost) {
        ties++;
        if (rng.nextInt(ties) == 0) {
          best = i;
        }
      }
    }
    return best;
  }

  private static int softmax(double[] logits, int n, double temperature, RandomGenerator rng) {
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      min = Math.min(min, logits[i]);
      max = Math.max(max, logits[i]);
    }
    if (!Double.isFinite(min) || !Double.isFinite(max)) {
      throw new IllegalArgumentException("softmax needs finite logits");
    }
    double u = rng.nextDouble();
    if (min == max) {
      return Math.min((int) (u * n), n - 1);
    }
    // Dividing first keeps the range finite when max - min would overflow.
    double magnitude = Double.isFinite(max - min) ? 1.0 : Math.max(Math.abs(min), Math.abs(max));
    double lo = min / magnitude;
    double span = max / magnitude - lo;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
      sum += weight(logits[i], magnitude, lo, span, temperature);
    }
    double target = u * sum;
    double cumulative = 0.0;
    int lastPositive = 0;
    for (int i = 0; i < n; i++) {
      double w = weight(logits[i], magnitude, lo, span, temperature);
      if (w > 0.0) {
        lastPositive = i;
        cumulative += w;
        if (target < cumulative) {
          return i;
        }
      }
    }
    return lastPositive;
  }

  /**
   * {@code exp(-x / T)} for the logit's position {@code x} in {@code [0, 1]} of the range. The
   * position is divided by {@code T} rather than multiplied by a precomputed {@code 1 / T}, so a
   * temperature too small for the range gives {@code exp(-0) = 1} for the best rank and
   * {@code exp(-inf) = 0} for the others instead of {@code 0 * inf = NaN}.
   */
  private static double weight(
      double logit, double magnitude, double lo, double span, double temperature) {
    return Math.exp(-((logit / magnitude - lo) / span) / temperature);
  }
}
