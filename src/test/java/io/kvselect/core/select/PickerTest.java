package io.kvselect.core.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Seeded-RNG checks of the picker; counts use generous bounds, never timing. */
class PickerTest {

  private static int[] histogram(double[] logits, double temperature, long seed, int draws) {
    RandomGenerator rng = new SplittableRandom(seed);
    int[] counts = new int[logits.length];
    for (int i = 0; i < draws; i++) {
      counts[Picker.pick(logits, temperature, rng)]++;
    }
    return counts;
  }

  @Test
  void zeroTemperaturePicksTheUniqueMinimum() {
    int[] counts = histogram(new double[] {3.0, 2.5, 7.0, 2.6}, 0.0, 1, 200);
    assertEquals(200, counts[1]);
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 42, 1234567})
  void zeroTemperatureBreaksTiesUniformly(long seed) {
    int[] counts = histogram(new double[] {3.0, 1.0, 1.0, 5.0, 1.0}, 0.0, seed, 3000);
    assertEquals(0, counts[0] + counts[3], "only tied minima may be chosen");
    for (int tied : new int[] {1, 2, 4}) {
      assertTrue(counts[tied] > 800 && counts[tied] < 1200, "tie " + tied + ": " + counts[tied]);
    }
  }

  @Test
  void zeroTemperatureTieBreakIsNotAlwaysTheSameIndex() {
    double[] logits = {1.0, 1.0};
    RandomGenerator rng = new SplittableRandom(7);
    int first = Picker.pick(logits, 0.0, rng);
    boolean varied = false;
    for (int i = 0; i < 64 && !varied; i++) {
      varied = Picker.pick(logits, 0.0, rng) != first;
    }
    assertTrue(varied);
  }

  @Test
  void softmaxFavoursLowerCostByTheNormalisedRatio() {
    // Two costs at T=1: p(low) = 1 / (1 + e^-1) = 0.731, whatever the scale of the logits.
    for (double[] logits : new double[][] {{0.0, 10.0}, {100.0, 100.5}}) {
      int[] counts = histogram(logits, 1.0, 99, 20000);
      double pLow = counts[0] / 20000.0;
      assertTrue(pLow > 0.70 && pLow < 0.76, "p(low) = " + pLow);
    }
  }

  @Test
  void softmaxOrdersProbabilitiesByCost() {
    int[] counts = histogram(new double[] {5.0, 0.0, 2.0}, 0.5, 3, 20000);
    assertTrue(counts[1] > counts[2] && counts[2] > counts[0], java.util.Arrays.toString(counts));
    assertTrue(counts[0] > 0, "the worst rank keeps a non-zero probability");
  }

  @Test
  void softmaxWithEqualCostsIsNearUniform() {
    int[] counts = histogram(new double[] {2.0, 2.0, 2.0, 2.0}, 1.0, 11, 20000);
    for (int c : counts) {
      assertTrue(c > 4000 && c < 6000, java.util.Arrays.toString(counts));
    }
  }

  @Test
  void softmaxHandlesARangeThatOverflows() {
    int[] counts = histogram(new double[] {-Double.MAX_VALUE, Double.MAX_VALUE}, 1.0, 5, 2000);
    assertTrue(counts[0] > counts[1]);
  }

  @Test
  void pickRespectsTheActiveLength() {
    double[] logits = {5.0, 4.0, 0.0};
    assertEquals(1, Picker.pick(logits, 2, 0.0, new SplittableRandom(1)));
  }

  @Test
  void rejectsBadArguments() {
    RandomGenerator rng = new SplittableRandom(1);
    assertThrows(IllegalArgumentException.class, () -> Picker.pick(new double[0], 0.0, rng));
    assertThrows(IllegalArgumentException.class, () -> Picker.pick(new double[] {1}, -0.1, rng));
    assertThrows(
        IllegalArgumentException.class, () -> Picker.pick(new double[] {1}, Double.NaN, rng));
    assertThrows(
        IllegalArgumentException.class,
        () -> Picker.pick(new double[] {1, Double.POSITIVE_INFINITY}, 1.0, rng));
  }
}
