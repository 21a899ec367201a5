package io.kvselect.core.history;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SampleRingTest {

  @Test
  void keepsTheLastSamplesOldestFirst() {
    SampleRing<Integer> ring = new SampleRing<>(3);
    assertEquals(List.of(), ring.snapshot());
    ring.add(1);
    ring.add(2);
    assertEquals(List.of(1, 2), ring.snapshot());
    ring.add(3);
    ring.add(4);
    ring.add(5);
    assertEquals(List.of(3, 4, 5), ring.snapshot());
    assertThrows(IllegalArgumentException.class, () -> new SampleRing<>(0));
  }

  @Test
  void anIntervalCountsSelectionsItsP99AndTheCachedShare() {
    IntervalRecorder r = new IntervalRecorder(1000, new SplittableRandom(1));
    IntervalRecorder.Interval empty = r.drain();
    assertEquals(0, empty.selections());
    assertEquals(-1, empty.p99Nanos());
    assertTrue(Double.isNaN(empty.cachedShare()));
    for (int i = 1; i <= 100; i++) {
      r.selected(i * 1_000L);
    }
    r.booked(100, 25);
    r.booked(100, 500);
    IntervalRecorder.Interval in = r.drain();
    assertEquals(100, in.selections());
    assertEquals(99_000L, in.p99Nanos());
    assertEquals(200, in.promptTokens());
    assertEquals(125, in.cachedTokens(), "cached never exceeds the prompt");
    assertEquals(0.625, in.cachedShare(), 1e-9);
    assertEquals(0, r.drain().selections(), "drain starts the next interval");
  }

  @Test
  void theReservoirBoundsMemoryAndStillCountsEverySelection() {
    IntervalRecorder r = new IntervalRecorder(16, new SplittableRandom(7));
    for (int i = 0; i < 10_000; i++) {
      r.selected(5);
    }
    r.selected(5);
    IntervalRecorder.Interval in = r.drain();
    assertEquals(10_001, in.selections());
    assertEquals(5, in.p99Nanos());
  }

  @Test
  void aRingOfOneKeepsTheLatestSample() {
    SampleRing<Integer> ring = new SampleRing<>(1);
    assertEquals(1, ring.capacity());
    ring.add(1);
    ring.add(2);
    assertEquals(List.of(2), ring.snapshot());
  }
}
