package io.kvselect.tools.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The event queue: time order, ties in scheduling order, the clock moved before each event. */
class SimEventLoopTest {

  @Test
  void runsInTimeOrderTiesInSchedulingOrderAndMovesTheClock() {
    SimClock clock = new SimClock();
    SimEventLoop loop = new SimEventLoop(clock);
    List<String> ran = new ArrayList<>();
    loop.at(5, () -> ran.add("b@" + clock.nowMs()));
    loop.at(1, () -> ran.add("a@" + clock.nowMs()));
    loop.at(5, () -> ran.add("c@" + loop.now()));
    loop.at(
        2,
        () -> {
          ran.add("d@" + loop.now());
          loop.at(5, () -> ran.add("e@" + loop.now()));
          loop.at(loop.now(), () -> ran.add("f@" + loop.now()));
        });
    loop.run();
    assertEquals(List.of("a@1.0", "d@2.0", "f@2.0", "b@5.0", "c@5.0", "e@5.0"), ran);
    assertEquals(5.0, loop.now(), "the time of the last event");
  }

  @Test
  void theTieSequenceIsShared() {
    SimEventLoop loop = new SimEventLoop(new SimClock());
    long a = loop.nextSeq();
    loop.at(0, () -> {});
    assertEquals(a + 2, loop.nextSeq(), "an event takes a value of the same sequence");
  }
}
