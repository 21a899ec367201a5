package io.kvselect.tools.chaos;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * What the client threads measure during one phase: completed lifecycles, failed calls, the
 * latency of every session-bound {@code select_and_reserve} (a call that timed out counts at its
 * elapsed time, so the tail is a lower bound), and the same latency restricted to the fault window
 * after its first {@link #SETTLE_NANOS} (the call's start decides). Thread-safe: client threads
 * record, the phase's runner opens and closes the fault window.
 */
final class PhaseStats {

  /** The start of a fault window left out of its own latency column. */
  static final long SETTLE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private static final long MAX_US = TimeUnit.MINUTES.toMicros(10);

  final LongAdder lifecycles = new LongAdder();
  final LongAdder turns = new LongAdder();
  final LongAdder moves = new LongAdder();
  final CallCounts failures = new CallCounts();

  /**
   * Selection ids whose booking the client could not settle: a {@code select_and_reserve} without
   * an answer (it may still book once the node recovers, after any cleanup it got), or a
   * {@code DELETE} whose every try failed without a 404. Freed once the phase's load stops.
   */
  final ConcurrentLinkedQueue<String> unsettled = new ConcurrentLinkedQueue<>();

  /**
   * Selection ids whose first {@code DELETE} answered 404 although their {@code select_and_reserve}
   * answered 200 in the same lifecycle (a booking the product said it did not know); tried again
   * once the phase's leak has been measured.
   */
  final ConcurrentLinkedQueue<String> denied = new ConcurrentLinkedQueue<>();

  private final Histogram all = new ConcurrentHistogram(MAX_US, 3);
  private final Histogram window = new ConcurrentHistogram(MAX_US, 3);
  private volatile long faultStart = Long.MAX_VALUE;
  private volatile long faultEnd = Long.MAX_VALUE;
  private volatile boolean hadFault;

  /** The fault began at {@code nanoTime}. */
  void faultStarted(long nanoTime) {
    faultStart = nanoTime;
    hadFault = true;
  }

  /** The fault ended at {@code nanoTime}. */
  void faultEnded(long nanoTime) {
    faultEnd = nanoTime;
  }

  /** One session-bound {@code select_and_reserve} that started at {@code startNanos} and took {@code nanos}. */
  void selectLatency(long startNanos, long nanos) {
    long us = Math.min(MAX_US, Math.max(1, nanos / 1000));
    all.recordValue(us);
    if (inWindow(startNanos, faultStart, faultEnd)) {
      window.recordValue(us);
    }
  }

  /** Whether a call started at {@code start} falls in the fault window {@code [from + settle, to)}. */
  static boolean inWindow(long start, long from, long to) {
    return from != Long.MAX_VALUE && start - from >= SETTLE_NANOS && start - to < 0;
  }

  /** One answered turn of a session and whether its worker changed since its previous turn. */
  void turn(BindingTracker.Turn t) {
    if (t != BindingTracker.Turn.FIRST) {
      turns.increment();
    }
    if (t == BindingTracker.Turn.MOVED) {
      moves.increment();
    }
  }

  Latency allLatency() {
    return Latency.of(all);
  }

  /** The fault window's latency, or null for a phase without a fault. */
  Latency windowLatency() {
    return hadFault ? Latency.of(window) : null;
  }
}
