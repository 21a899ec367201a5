package io.kvselect.tools.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Binding moves: counted between consecutive answered turns of one session, in the phase of the later turn. */
class BindingTrackerTest {

  @Test
  void aFirstTurnIsNoMoveAndOnlyAChangeOfWorkerIsOne() {
    BindingTracker t = new BindingTracker();
    assertEquals(BindingTracker.Turn.FIRST, t.observe("a", 1));
    assertEquals(BindingTracker.Turn.SAME, t.observe("a", 1));
    assertEquals(BindingTracker.Turn.MOVED, t.observe("a", 2));
    assertEquals(BindingTracker.Turn.MOVED, t.observe("a", 1));
    assertEquals(BindingTracker.Turn.FIRST, t.observe("b", 1), "sessions are tracked apart");
  }

  @Test
  void aMoveAcrossAPhaseBoundaryCountsInTheLaterPhase() {
    BindingTracker t = new BindingTracker();
    PhaseStats first = new PhaseStats();
    first.turn(t.observe("a", 1));
    first.turn(t.observe("a", 1));
    first.turn(t.observe("b", 3));
    PhaseStats second = new PhaseStats();
    second.turn(t.observe("a", 2));
    second.turn(t.observe("b", 3));
    second.turn(t.observe("c", 4));

    assertEquals(1, first.turns.sum(), "only a's second turn had a previous turn");
    assertEquals(0, first.moves.sum());
    assertEquals(2, second.turns.sum(), "c's first turn is no repeat turn");
    assertEquals(1, second.moves.sum(), "a moved from 1 to 2 between the phases");
  }
}
