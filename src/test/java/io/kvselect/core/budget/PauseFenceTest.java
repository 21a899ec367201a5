package io.kvselect.core.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PauseFenceTest {

  private static final long S = 1_000_000_000L;

  /** Threshold 5 s, settle 5 s, at most 30 s; beats every 100 ms from 0 to {@code toSecs}. */
  private static PauseFence beating(double toSecs) {
    PauseFence f = new PauseFence(5 * S, 5 * S, 30 * S);
    for (long t = 0; t <= (long) (toSecs * S); t += S / 10) {
      f.tick(t);
    }
    return f;
  }

  @Test
  void regularBeatsAndShortGapsNeverFence() {
    PauseFence f = beating(10);
    f.tick(10 * S + 4 * S); // a 4 s stall: under the failure timeout
    assertNull(f.reason(14 * S));
    assertEquals(0, f.fences());
  }

  @Test
  void aPauseLongerThanTheFailureTimeoutFencesUntilTheMerge() {
    PauseFence f = beating(10);
    f.membership(3, 0);
    f.tick(16 * S); // woken after 6 s
    String reason = f.reason(16 * S);
    assertNotNull(reason);
    assertTrue(reason.contains("paused for 6.0 s"), reason);
    f.membership(1, 17 * S); // the others removed it
    assertNotNull(f.reason(19 * S));
    f.merged(19 * S);
    assertNull(f.reason(19 * S));
    assertEquals("merged back into the cluster", f.lastLift());
    assertEquals(1, f.fences());
  }

  @Test
  void anUnchangedMemberListWithOthersLiftsTheFenceAfterTheSettleTime() {
    PauseFence f = beating(10);
    f.membership(3, 0);
    f.tick(16 * S);
    f.tick(20 * S + S / 2);
    assertNotNull(f.reason(20 * S + S / 2), "4.5 s after the wake-up: still fenced");
    f.tick(21 * S);
    assertNull(f.reason(21 * S), "5 s with the same three members: the others kept it");
  }

  @Test
  void aloneWithoutAMergeTheFenceEndsAtItsBound() {
    PauseFence f = beating(10);
    f.membership(3, 0);
    f.tick(16 * S);
    f.membership(1, 17 * S);
    assertNotNull(f.reason(45 * S));
    assertNull(f.reason(46 * S), "30 s after it began: a split, served as its side");
    assertTrue(f.lastLift().contains("split"), f.lastLift());
  }

  @Test
  void aMemberThatWasAloneIsNeverFenced() {
    PauseFence f = beating(10);
    f.tick(16 * S); // no member list seen yet
    assertNull(f.reason(16 * S));
    f.membership(1, 17 * S);
    f.tick(30 * S); // a 13 s pause of a lone member: nobody could have removed it
    assertNull(f.reason(30 * S));
    assertEquals(0, f.fences());
  }

  @Test
  void everyDurationMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new PauseFence(0, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new PauseFence(1, 0, 1));
    assertThrows(IllegalArgumentException.class, () -> new PauseFence(1, 1, 0));
    PauseFence shortest = new PauseFence(1, 1, 1);
    shortest.membership(2, 0);
    shortest.tick(0);
    shortest.tick(1);
    assertEquals(1, shortest.fences(), "one nanosecond each is allowed, and a 1 ns gap fences");
  }

  @Test
  void aGapOfExactlyTheThresholdFences() {
    PauseFence f = beating(10);
    f.membership(3, 0);
    f.tick(15 * S); // the last beat was at 10 s
    assertEquals(1, f.fences());
    assertNotNull(f.reason(15 * S));
  }

  @Test
  void aMemberListThatChangesDuringTheFenceRestartsTheSettleTime() {
    PauseFence f = beating(10);
    f.membership(3, 0);
    f.tick(16 * S);
    f.membership(2, 18 * S); // one of the others left meanwhile
    assertNotNull(f.reason(22 * S), "6 s after the fence, 4 s after the last change: fenced");
    assertNull(f.reason(23 * S), "5 s with the same two members");
    assertTrue(f.lastLift().contains("with 2 members"), f.lastLift());
  }

  @Test
  void aTickOrAMemberListLiftsTheFenceWithoutAnyoneAskingWhy() {
    PauseFence byTick = beating(10);
    byTick.membership(3, 0);
    byTick.tick(16 * S);
    for (long t = 16 * S; t <= 21 * S; t += S / 10) {
      byTick.tick(t);
    }
    assertTrue(byTick.lastLift().contains("unchanged"), "lifted by the beat: " + byTick.lastLift());

    PauseFence byList = beating(10);
    byList.membership(3, 0);
    byList.tick(16 * S);
    byList.membership(3, 21 * S);
    assertTrue(
        byList.lastLift().contains("unchanged"), "lifted by the member list: " + byList.lastLift());
  }

  @Test
  void nothingIsLiftedWhileNoFenceIsUp() {
    PauseFence f = beating(10);
    f.membership(3, 0);
    assertNull(f.reason(60 * S));
    f.membership(3, 61 * S);
    assertEquals("", f.lastLift(), "no fence, so nothing was lifted");
    assertEquals(0, f.fences());
  }
}
