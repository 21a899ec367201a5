package io.kvselect.tools.sim;

import java.util.PriorityQueue;

/**
 * The simulator's event queue and time: events run in time order, ties in the order they were
 * scheduled, and the {@link SimClock} the selection service reads is moved to each event's time
 * before it runs. It also hands out the one sequence that breaks ties, so that other queues of a
 * run ({@link SimClient}'s ready turns) order ties the same way.
 *
 * <p>Mutable; owned by one {@link Simulator} and confined to its thread.
 */
final class SimEventLoop {

  private record Ev(double t, long seq, Runnable run) {}

  private final PriorityQueue<Ev> events =
      new PriorityQueue<>(
          (a, b) -> a.t != b.t ? Double.compare(a.t, b.t) : Long.compare(a.seq, b.seq));
  private final SimClock clock;
  private long seq;
  private double now;

  SimEventLoop(SimClock clock) {
    this.clock = clock;
  }

  /** Schedules {@code r} at simulated time {@code t} (milliseconds). */
  void at(double t, Runnable r) {
    events.add(new Ev(t, seq++, r));
  }

  /** The next value of the tie-breaking sequence. */
  long nextSeq() {
    return seq++;
  }

  /** The time of the event running (after {@link #run}: of the last event). */
  double now() {
    return now;
  }

  /** Runs events until none is left. */
  void run() {
    while (!events.isEmpty()) {
      Ev e = events.poll();
      now = e.t;
      clock.set(now);
      e.run.run();
    }
  }
}
