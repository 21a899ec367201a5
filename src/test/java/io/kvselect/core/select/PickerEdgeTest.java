package io.kvselect.core.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/**
 * {@link Picker} at its edges, with a generator that returns a chosen uniform draw so every
 * cumulative boundary can be placed exactly: the candidate count, extreme temperatures, logits
 * whose spread overflows a double.
 */
class PickerEdgeTest {

  /** Weight ratio of the worst to the best rank at {@code T = 1}. */
  private static final double E_INV = Math.exp(-1.0);

  /** Probability of the best of two ranks at {@code T = 1}: {@code 1 / (1 + e^-1)}. */
  private static final double P_BEST = 1.0 / (1.0 + E_INV);

  /** A generator whose every {@code nextDouble} is {@code u}. */
  private static RandomGenerator draw(double u) {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        throw new UnsupportedOperationException();
      }

      @Override
      public double nextDouble() {
        return u;
      }
    };
  }

  @Test
  void nMustNameBetweenOneAndAllCandidates() {
    RandomGenerator rng = new SplittableRandom(1);
    double[] logits = {3.0, 1.0};
    assertThrows(IllegalArgumentException.class, () -> Picker.pick(logits, 3, 0.0, rng));
    assertThrows(IllegalArgumentException.class, () -> Picker.pick(logits, 3, 1.0, rng));
    assertThrows(IllegalArgumentException.class, () -> Picker.pick(logits, 0, 0.0, rng));
    assertThrows(IllegalArgumentException.class, () -> Picker.pick(logits, -1, 1.0, rng));
    assertEquals(1, Picker.pick(logits, 2, 0.0, rng));
    assertEquals(0, Picker.pick(logits, 1, 0.0, rng));
    assertEquals(0, Picker.pick(logits, 1, 1.0, rng));
  }

  @Test
  void softmaxNeverPicksBeyondN() {
    double[] logits = {0.0, 1.0, -1_000.0};
    for (double u : new double[] {0.0, 0.5, P_BEST + 1e-9, 0.999_999}) {
      int i = Picker.pick(logits, 2, 1.0, draw(u));
      assertTrue(i < 2, "u " + u + " picked " + i);
    }
  }

  @Test
  void cumulativeBoundariesOfTwoRanks() {
    double[] logits = {0.0, 1.0};
    assertEquals(0, Picker.pick(logits, 1.0, draw(0.0)));
    assertEquals(0, Picker.pick(logits, 1.0, draw(P_BEST - 1e-9)));
    assertEquals(1, Picker.pick(logits, 1.0, draw(P_BEST + 1e-9)));
    assertEquals(1, Picker.pick(logits, 1.0, draw(Math.nextDown(1.0))));
    double[] reversed = {1.0, 0.0};
    assertEquals(0, Picker.pick(reversed, 1.0, draw(0.0)));
    assertEquals(0, Picker.pick(reversed, 1.0, draw(1.0 - P_BEST - 1e-9)));
    assertEquals(1, Picker.pick(reversed, 1.0, draw(1.0 - P_BEST + 1e-9)));
    assertEquals(1, Picker.pick(reversed, 1.0, draw(Math.nextDown(1.0))));
  }

  @Test
  void temperatureScalesTheNormalisedRange() {
    // T = 0.5: weights 1 and e^-2, whatever the scale of the logits.
    double pBest = 1.0 / (1.0 + Math.exp(-2.0));
    for (double[] logits : new double[][] {{10.0, 30.0}, {-3e-5, -1e-5}}) {
      assertEquals(0, Picker.pick(logits, 0.5, draw(pBest - 1e-9)));
      assertEquals(1, Picker.pick(logits, 0.5, draw(pBest + 1e-9)));
    }
  }

  @Test
  void equalCostsSplitTheDrawEvenly() {
    double[] logits = {2.0, 2.0, 2.0, 2.0};
    assertEquals(0, Picker.pick(logits, 1.0, draw(0.0)));
    assertEquals(1, Picker.pick(logits, 1.0, draw(0.25)));
    assertEquals(2, Picker.pick(logits, 1.0, draw(0.74)));
    assertEquals(3, Picker.pick(logits, 1.0, draw(Math.nextDown(1.0))));
    assertEquals(2, Picker.pick(logits, 3, 1.0, draw(Math.nextDown(1.0))));
  }

  @Test
  void aSpreadThatOverflowsIsNormalisedLikeAnyOther() {
    double max = Double.MAX_VALUE;
    double[] logits = {-max, max};
    assertEquals(0, Picker.pick(logits, 1.0, draw(P_BEST - 1e-9)));
    assertEquals(1, Picker.pick(logits, 1.0, draw(P_BEST + 1e-9)));
    // positions 1, 0 and 1/2 of the range: weights e^-1, 1, e^-1/2
    double[] three = {max, -max, 0.0};
    double sum = E_INV + 1.0 + Math.exp(-0.5);
    assertEquals(0, Picker.pick(three, 1.0, draw((E_INV - 1e-9) / sum)));
    assertEquals(1, Picker.pick(three, 1.0, draw((E_INV + 1e-9) / sum)));
    assertEquals(1, Picker.pick(three, 1.0, draw((E_INV + 1.0 - 1e-9) / sum)));
    assertEquals(2, Picker.pick(three, 1.0, draw((E_INV + 1.0 + 1e-9) / sum)));
    double[] large = {max, max / 2};
    assertEquals(0, Picker.pick(large, 1.0, draw(1.0 - P_BEST - 1e-9)));
    assertEquals(1, Picker.pick(large, 1.0, draw(1.0 - P_BEST + 1e-9)));
  }

  /**
   * When the range times the temperature underflows, the best rank must still win: a
   * precomputed {@code -1 / (range * T)} is {@code -Infinity}, and {@code 0 * -Infinity} made the
   * best rank's weight NaN, so the first index came back whatever its cost.
   */
  @Test
  void aTemperatureTooSmallForTheRangeStillPicksTheBest() {
    for (double u : new double[] {0.0, 0.3, 0.999}) {
      assertEquals(1, Picker.pick(new double[] {1e-300, 0.0}, 1e-10, draw(u)), "u " + u);
      assertEquals(1, Picker.pick(new double[] {5.0, 1.0}, Double.MIN_VALUE, draw(u)), "u " + u);
      assertEquals(2, Picker.pick(new double[] {5.0, 3.0, 1.0, 1.0 + 1e-15}, 1e-320, draw(u)));
    }
  }

  @Test
  void anInfiniteTemperatureIsUniform() {
    double[] logits = {0.0, 100.0};
    assertEquals(0, Picker.pick(logits, Double.POSITIVE_INFINITY, draw(0.49)));
    assertEquals(1, Picker.pick(logits, Double.POSITIVE_INFINITY, draw(0.51)));
  }

  @Test
  void infiniteLogitsAreRejectedBySoftmaxOnly() {
    double[] logits = {Double.NEGATIVE_INFINITY, 1.0};
    assertThrows(IllegalArgumentException.class, () -> Picker.pick(logits, 1.0, draw(0.5)));
    assertThrows(
        IllegalArgumentException.class,
        () -> Picker.pick(new double[] {Double.NaN, 1.0}, 1.0, draw(0.5)));
    assertEquals(0, Picker.pick(logits, 0.0, new SplittableRandom(3)));
  }
}
