package io.kvselect.core.history;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/** The interval totals the status page's history shows: reservoir, p99, cached share, reset. */
class IntervalRecorderTest {

  /** Answers the reservoir's draws from a script and records the bound of each draw. */
  private static final class Scripted implements RandomGenerator {
    final ArrayDeque<Long> answers = new ArrayDeque<>();
    final List<Long> bounds = new ArrayList<>();

    @Override
    public long nextLong() {
      throw new AssertionError("the reservoir draws with a bound");
    }

    @Override
    public long nextLong(long bound) {
      bounds.add(bound);
      return answers.removeFirst();
    }
  }

  @Test
  void aReservoirOfOneIsAcceptedAndZeroIsRefused() {
    IntervalRecorder one = new IntervalRecorder(1, new Scripted());
    one.selected(7);
    assertEquals(7, one.drain().p99Nanos());
    assertThrows(IllegalArgumentException.class, () -> new IntervalRecorder(0, new Scripted()));
  }

  @Test
  void pastTheReservoirEachLatencyReplacesASlotWithProbabilityReservoirOverSeen() {
    Scripted rng = new Scripted();
    IntervalRecorder r = new IntervalRecorder(2, rng);
    r.selected(10);
    r.selected(20);
    assertEquals(List.of(), rng.bounds, "no draw while the reservoir has room");
    rng.answers.add(0L); // the third latency replaces slot 0
    r.selected(30);
    rng.answers.add(2L); // the fourth draws outside the reservoir: dropped
    r.selected(1_000);
    assertEquals(List.of(3L, 4L), rng.bounds, "the draw is uniform over every latency seen");
    IntervalRecorder.Interval in = r.drain();
    assertEquals(4, in.selections(), "every selection counts, kept or not");
    assertEquals(30, in.p99Nanos(), "held {30, 20}: the dropped 1,000 is not in it");
  }

  @Test
  void theP99IsTheNearestRankOfTheSortedReservoir() {
    IntervalRecorder r = new IntervalRecorder(500, new Scripted());
    for (int v = 200; v >= 1; v--) { // arrives unsorted
      r.selected(v);
    }
    assertEquals(198, r.drain().p99Nanos(), "ceil(0.99 * 200) = 198th of 1..200");
    r.selected(50);
    r.selected(10);
    r.selected(30);
    assertEquals(50, r.drain().p99Nanos(), "three samples: the largest");
  }

  @Test
  void drainStartsAFreshInterval() {
    IntervalRecorder r = new IntervalRecorder(4, new Scripted());
    r.selected(100);
    r.booked(1_000, 250);
    IntervalRecorder.Interval first = r.drain();
    assertEquals(new IntervalRecorder.Interval(1, 100, 1_000, 250), first);
    assertEquals(0.25, first.cachedShare());
    IntervalRecorder.Interval empty = r.drain();
    assertEquals(new IntervalRecorder.Interval(0, -1, 0, 0), empty);
    assertTrue(Double.isNaN(empty.cachedShare()), "nothing booked: no share");
    r.selected(5);
    assertEquals(5, r.drain().p99Nanos(), "the old interval's samples are gone");
  }

  @Test
  void bookedTokensAreClampedToTheirMeaning() {
    IntervalRecorder r = new IntervalRecorder(1, new Scripted());
    r.booked(100, 150); // more cached than booked counts as all of it
    r.booked(-5, -5); // nonsense counts nothing
    r.booked(100, -1);
    IntervalRecorder.Interval in = r.drain();
    assertEquals(200, in.promptTokens());
    assertEquals(100, in.cachedTokens());
    assertEquals(0.5, in.cachedShare());
  }
}
