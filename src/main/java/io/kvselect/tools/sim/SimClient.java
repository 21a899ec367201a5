package io.kvselect.tools.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * The simulated client of a run: sessions arrive at their start time and open while fewer than
 * {@code maxOpenSessions} are open (0: no limit; the others wait in arrival order); a session's
 * turn is ready at its arrival time, or after its predecessor completed and the think time passed;
 * ready turns are sent in the order they became ready while fewer than {@code concurrency} are in
 * flight. When a session's last turn completes the client closes it, and under
 * {@code releaseOnClose} every decode engine frees its cache ({@link SimEngines#closeSession}).
 *
 * <p>Mutable (the open and in-flight counts, the waiting sessions, the ready turns); owned by one
 * {@link Simulator} and confined to its thread.
 */
final class SimClient {

  private record Ready(double at, long seq, Workload.Turn turn) {}

  private final Workload w;
  private final Simulator.Config c;
  private final SimEventLoop loop;
  private final SimEngines engines;
  private final Consumer<SimRequest> send;
  private int inFlight;
  private int open;
  private final ArrayDeque<Workload.Session> pendingOpen = new ArrayDeque<>();
  private final PriorityQueue<Ready> ready =
      new PriorityQueue<>(
          (a, b) -> {
            int x = Double.compare(a.at, b.at);
            return x != 0 ? x : Long.compare(a.seq, b.seq);
          });

  /**
   * @param send where a request goes when the client sends it (the dispatch to the server)
   */
  SimClient(
      Workload w,
      Simulator.Config c,
      SimEventLoop loop,
      SimEngines engines,
      Consumer<SimRequest> send) {
    this.w = w;
    this.c = c;
    this.loop = loop;
    this.engines = engines;
    this.send = send;
  }

  /** Schedules every session's arrival, by start time then id. */
  void start() {
    List<Workload.Session> order = new ArrayList<>(w.sessions());
    order.sort(
        (a, b) ->
            a.startMs() != b.startMs()
                ? Double.compare(a.startMs(), b.startMs())
                : Integer.compare(a.id(), b.id()));
    for (Workload.Session s : order) {
      loop.at(s.startMs(), () -> arrive(s));
    }
  }

  private void arrive(Workload.Session s) {
    if (c.maxOpenSessions() > 0 && open >= c.maxOpenSessions()) {
      pendingOpen.add(s);
      return;
    }
    open++;
    ready(s.turns().get(0), loop.now());
  }

  private void ready(Workload.Turn t, double when) {
    double at = Double.isNaN(t.arrivalMs()) ? when : Math.max(when, t.arrivalMs());
    loop.at(
        at,
        () -> {
          ready.add(new Ready(loop.now(), loop.nextSeq(), t));
          pump();
        });
  }

  private void pump() {
    while (inFlight < c.concurrency() && !ready.isEmpty()) {
      Workload.Turn t = ready.poll().turn;
      inFlight++;
      send.accept(new SimRequest(t, loop.now()));
    }
  }

  /** {@code r} got its last token: its session's next turn, or the session closes. */
  void completed(SimRequest r) {
    inFlight--;
    Workload.Turn t = r.turn;
    Workload.Session s = w.sessions().get(t.session());
    if (t.turn() + 1 < s.turns().size()) {
      Workload.Turn next = s.turns().get(t.turn() + 1);
      ready(next, loop.now() + next.thinkMs());
    } else {
      open--;
      if (c.releaseOnClose()) {
        engines.closeSession(t.session());
      }
      if (!pendingOpen.isEmpty()) {
        Workload.Session n = pendingOpen.poll();
        open++;
        ready(n.turns().get(0), loop.now());
      }
    }
    pump();
  }
}
