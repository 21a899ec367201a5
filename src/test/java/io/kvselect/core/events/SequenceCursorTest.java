package io.kvselect.core.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.events.SequenceCursor.Kind;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Decision table of the sequence cursor (stale window 4 unless a row says otherwise). */
class SequenceCursorTest {

  @ParameterizedTest(name = "[{index}] replay={0} seen=''{1}'' seq={2} -> {3} [{4},{5}) last={6}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      # replay | seen before  | seq | kind    | from | to | last after
      true     | ''           | 0   | APPLY   | 0    | 0  | 0
      true     | ''           | 7   | REPLAY  | 0    | 7  | 7
      false    | ''           | 7   | APPLY   | 0    | 0  | 7
      true     | 0            | 1   | APPLY   | 0    | 0  | 1
      true     | 0 1 2        | 3   | APPLY   | 0    | 0  | 3
      true     | 0 1          | 5   | GAP     | 2    | 5  | 5
      false    | 0 1          | 5   | GAP     | 2    | 5  | 5
      true     | 7            | 9   | GAP     | 8    | 9  | 9
      true     | 0 1 2        | 2   | STALE   | 0    | 0  | 2
      true     | 0 1 2 3 4 5  | 3   | STALE   | 0    | 0  | 5
      true     | 10           | 6   | STALE   | 0    | 0  | 10
      true     | 0            | 0   | STALE   | 0    | 0  | 0
      true     | 0 1 2        | 0   | RESTART | 0    | 0  | 0
      false    | 100          | 0   | RESTART | 0    | 0  | 0
      true     | 100          | 5   | RESTART | 0    | 5  | 5
      false    | 100          | 5   | RESTART | 0    | 0  | 5
      true     | 10           | 5   | RESTART | 0    | 5  | 5
      true     | 0 1 2 0      | 1   | APPLY   | 0    | 0  | 1
      true     | 0 1 2 0      | 3   | GAP     | 1    | 3  | 3
      true     | 0 1 5 2      | 6   | APPLY   | 0    | 0  | 6
      """)
  void decisionTable(
      boolean replay, String seen, long seq, Kind kind, long from, long to, long lastAfter) {
    SequenceCursor cursor = new SequenceCursor(replay, 4);
    Arrays.stream(seen.trim().split("\\s+"))
        .filter(s -> !s.isEmpty())
        .forEach(s -> cursor.onSequence(Long.parseLong(s)));
    SequenceCursor.Decision d = cursor.onSequence(seq);
    assertEquals(new SequenceCursor.Decision(kind, from, to), d);
    assertEquals(to > from, d.needsReplay());
    assertEquals(lastAfter, cursor.last());
  }

  @Test
  void startsInitialAndResetReturnsThere() {
    SequenceCursor cursor = new SequenceCursor(true);
    assertFalse(cursor.isLive());
    assertEquals(-1, cursor.last());
    cursor.onSequence(3);
    assertTrue(cursor.isLive());
    cursor.reset();
    assertFalse(cursor.isLive());
    assertEquals(Kind.REPLAY, cursor.onSequence(9).kind());
  }

  @Test
  void defaultWindowTreatsLongBackwardJumpsAsRestarts() {
    SequenceCursor cursor = new SequenceCursor(false);
    cursor.onSequence(1000);
    assertEquals(Kind.STALE, cursor.onSequence(1000 - SequenceCursor.DEFAULT_STALE_WINDOW).kind());
    assertEquals(
        Kind.RESTART, cursor.onSequence(1000 - SequenceCursor.DEFAULT_STALE_WINDOW - 1).kind());
  }

  @Test
  void rejectsNegativeSequencesAndWindows() {
    assertThrows(IllegalArgumentException.class, () -> new SequenceCursor(true).onSequence(-1));
    assertThrows(IllegalArgumentException.class, () -> new SequenceCursor(true, -1));
  }
}
