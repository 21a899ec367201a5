package io.kvselect.tools.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The fault-window column: calls that start at least 5 s into the fault and before its end (nanoTime arithmetic). */
class PhaseStatsTest {

  private static final long S = TimeUnit.SECONDS.toNanos(1);

  @Test
  void theWindowStartsFiveSecondsIntoTheFaultAndEndsWithIt() {
    long from = 100 * S;
    long to = 120 * S;
    assertFalse(PhaseStats.inWindow(from + 4 * S, from, to), "the first 5 s are left out");
    assertTrue(PhaseStats.inWindow(from + 5 * S, from, to));
    assertTrue(PhaseStats.inWindow(to - 1, from, to));
    assertFalse(PhaseStats.inWindow(to, from, to), "after the fault ended");
    assertFalse(
        PhaseStats.inWindow(from + 6 * S, Long.MAX_VALUE, Long.MAX_VALUE), "no fault, no window");
    assertTrue(PhaseStats.inWindow(from + 6 * S, from, Long.MAX_VALUE), "a fault still going on");
  }

  @Test
  void theWindowIsRightAcrossANanoTimeOverflow() {
    long from = Long.MAX_VALUE - 2 * S;
    long to = from + 20 * S;
    assertTrue(PhaseStats.inWindow(from + 6 * S, from, to));
    assertFalse(PhaseStats.inWindow(from + 21 * S, from, to));
  }

  @Test
  void aPhaseWithoutAFaultHasNoWindowColumnAndAFaultedOneRecordsIt() {
    PhaseStats quiet = new PhaseStats();
    quiet.selectLatency(0, 1_000_000);
    assertNull(quiet.windowLatency());
    assertEquals(1, quiet.allLatency().count());

    PhaseStats faulted = new PhaseStats();
    faulted.faultStarted(0);
    faulted.selectLatency(S, 3_000_000);
    faulted.selectLatency(6 * S, 2_000_000_000L);
    faulted.faultEnded(10 * S);
    faulted.selectLatency(11 * S, 1_000_000);

    assertEquals(3, faulted.allLatency().count());
    Latency w = faulted.windowLatency();
    assertEquals(1, w.count());
    assertEquals(2000, w.maxMs(), 2.0);
  }
}
