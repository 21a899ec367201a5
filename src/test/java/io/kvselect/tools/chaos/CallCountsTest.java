package io.kvselect.tools.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Failed calls counted by operation and outcome, and their one-cell form. */
class CallCountsTest {

  @Test
  void countsByOperationAndOutcomeSorted() {
    CallCounts c = new CallCounts();
    c.fail("select", "503");
    c.fail("select", CallCounts.TIMEOUT);
    c.fail("select", "503");
    c.fail("delete", "404");

    Map<String, Map<String, Long>> s = c.snapshot();

    assertEquals(
        Map.of("delete", Map.of("404", 1L), "select", Map.of("503", 2L, "timeout", 1L)), s);
    assertEquals("delete: 404 x1; select: 503 x2, timeout x1", CallCounts.format(s));
    assertEquals(1, CallCounts.total(s, CallCounts.TIMEOUT));
    assertEquals(0, CallCounts.total(s, "429"));
  }

  @Test
  void nothingFailedReadsNone() {
    assertEquals("none", CallCounts.format(new CallCounts().snapshot()));
  }
}
