package io.kvselect.core.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DeferredFreesTest {

  private static final long TTL = 1_000;

  @Test
  void aHintForAnOriginIsDueUntilItsHolderAnswers() {
    DeferredFrees h = new DeferredFrees(10, TTL);
    assertTrue(h.forOrigin("n2", "a", 0));
    assertTrue(h.forOrigin("n2", "b", 0));
    assertTrue(h.forOrigin("n2", "a", 5), "the same free twice is one hint");
    assertEquals(Set.of("n2"), h.origins(10));
    assertEquals(List.of("a", "b"), h.due("n2", 10, 10));
    assertEquals(List.of("a"), h.due("n2", 1, 10), "at most max, oldest first");

    h.delivered("n2", "a", true);
    h.delivered("n2", "b", false);
    assertEquals(0, h.size());
    assertEquals(Set.of(), h.origins(10));
    assertEquals(1L, h.snapshot(10).get("delivered"));
    assertEquals(1L, h.snapshot(10).get("not_held"));
    assertEquals(2L, h.snapshot(10).get("recorded"));
  }

  @Test
  void aHintForAnyReturningNodeIsCopiedToEachNodeThatComesBack() {
    DeferredFrees h = new DeferredFrees(10, TTL);
    h.forAnyReturning("x", 0);
    assertEquals(Set.of(), h.origins(1), "nobody came back yet");
    h.returned("n1", 1);
    h.returned("n2", 1);
    assertEquals(Set.of("n1", "n2"), h.origins(1));
    h.delivered("n1", "x", false);
    assertEquals(List.of("x"), h.due("n2", 10, 2), "n1 not holding it does not end n2's copy");
    assertEquals(2, h.size(), "n2's copy and the hint for later returns");
    assertEquals(1L, h.snapshot(2).get("pending"), "n2's copy");
    assertEquals(
        1L, h.snapshot(2).get("for_returning"), "kept for a node that may still come back");
  }

  @Test
  void hintsExpireAfterTheirTtl() {
    DeferredFrees h = new DeferredFrees(10, TTL);
    h.forOrigin("n2", "a", 0);
    h.forAnyReturning("x", 0);
    h.forOrigin("n2", "b", 600);
    assertEquals(List.of("b"), h.due("n2", 10, TTL));
    h.returned("n3", TTL);
    assertFalse(h.origins(TTL).contains("n3"), "an expired hint for any node is not copied");
    assertEquals(2L, h.snapshot(TTL).get("expired"));
    assertEquals(1L, h.snapshot(TTL).get("pending"));
  }

  @Test
  void aFullStoreRefusesAndCounts() {
    DeferredFrees h = new DeferredFrees(2, TTL);
    assertTrue(h.forOrigin("n1", "a", 0));
    assertTrue(h.forAnyReturning("b", 0));
    assertFalse(h.forOrigin("n1", "c", 0));
    assertFalse(h.forAnyReturning("d", 0));
    assertEquals(2, h.size());
    assertEquals(2L, h.snapshot(0).get("refused"));
    assertEquals(Set.of("n1"), h.origins(0));
  }
}
