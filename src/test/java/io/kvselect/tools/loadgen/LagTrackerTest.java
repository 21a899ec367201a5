package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The lag definition on explicit clock values: the age of the oldest published, undelivered batch. */
class LagTrackerTest {

  private static final long MS = 1_000_000;

  @Test
  void lagIsTheAgeOfTheOldestUndeliveredBatchAndZeroWhenCaughtUp() {
    LagTracker t = new LagTracker(2, 16, 10);
    t.start(0);
    t.published(0, 10 * MS); // seq 0
    t.published(0, 20 * MS); // seq 1
    t.published(1, 15 * MS); // seq 0 of rank 1
    assertEquals(140 * MS, t.lagNanos(0, -1, 150 * MS));
    assertEquals(130 * MS, t.lagNanos(0, 0, 150 * MS));
    assertEquals(0, t.lagNanos(0, 1, 150 * MS));
    assertEquals(140 * MS, t.sample(new long[] {-1, 0}, 150 * MS));
    assertEquals(140 * MS, t.maxNanos(0));
    assertEquals(0, t.maxNanos(1));
    assertEquals(0, t.sample(new long[] {1, 0}, 1_500 * MS));
    assertEquals(140 * MS, t.maxNanos(0, 1));
    assertEquals(0, t.maxNanos(1, 2));
    assertEquals(140 * MS, t.maxNanos());
    assertFalse(t.truncated());
  }

  @Test
  void aRankStuckForAKnownTimeShowsAtLeastThatLagInItsSecondAndNoMoreThanTheTimeSincePublishing() {
    LagTracker t = new LagTracker(1, 16, 10);
    t.start(0);
    t.published(0, 2_000 * MS);
    for (long now = 2_000 * MS; now <= 2_300 * MS; now += 10 * MS) {
      t.sample(new long[] {-1}, now);
    }
    assertEquals(300 * MS, t.maxNanos(2, 3));
    assertEquals(0, t.maxNanos(0, 2));
    t.sample(new long[] {0}, 2_310 * MS);
    assertEquals(300 * MS, t.maxNanos());
  }

  @Test
  void aRankFurtherBehindThanTheKeptTimesGetsALowerBoundAndIsFlagged() {
    LagTracker t = new LagTracker(1, 4, 10);
    t.start(0);
    for (int i = 0; i < 6; i++) {
      t.published(0, i * MS);
    }
    // oldest undelivered is seq 0 (published at 0), but only seqs 2..5 are kept: seq 2's time
    // counts
    assertEquals(8 * MS, t.lagNanos(0, -1, 10 * MS));
    assertTrue(t.truncated());
    assertEquals(6, t.count(0));
  }
}
