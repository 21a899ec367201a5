package io.kvselect.tools.loadgen;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * What one {@link OpenLoopSender} measured, or the merge of several. Only requests whose
 * intended send instant lies in the measured window are counted; times are in microseconds.
 *
 * <ul>
 *   <li>{@link #latency}: from the intended send instant to the end of the response body, for
 *       2xx answers (coordinated-omission corrected: a request that waited for the generator or
 *       for a free connection carries that wait);
 *   <li>{@link #sendLatency}: from the moment the request was handed to the HTTP client to the
 *       end of its response, for the same answers (the uncorrected measure, for comparison);
 *   <li>{@link #lag}: from the intended instant to the moment the generator's event loop took the
 *       request up (sent it or queued it for a connection): how far the generator itself was
 *       behind its schedule, excluding the wait for a connection.
 * </ul>
 *
 * <p>Mutable and not thread-safe: a sender's instance is written only by its event loop; the
 * main thread reads a {@link #copy()} made on that event loop.
 */
final class OpenLoopStats {

  private static final long MAX_MICROS = TimeUnit.MINUTES.toMicros(10);

  final Histogram latency = new Histogram(MAX_MICROS, 3);
  final Histogram sendLatency = new Histogram(MAX_MICROS, 3);
  final Histogram lag = new Histogram(MAX_MICROS, 3);

  /** Failures by kind: {@code "HTTP <status>"} or the exception's simple class name. */
  final Map<String, Long> errors = new TreeMap<>();

  /** Requests of the window taken up by the generator. */
  long dispatched;

  /** Requests of the window answered (any status) or failed. */
  long completed;

  /** Answers and failures, of any request, whose end fell inside the window. */
  long completedInWindow;

  /** Largest number of requests waiting for a connection at once. */
  long maxQueued;

  /** HTTP calls made over the whole run (warm-up, window and DELETEs included). */
  long calls;

  /** {@code DELETE /reservations/{id}} calls sent, and those not answered 200. */
  long deletes;

  long deleteErrors;

  void error(String kind) {
    errors.merge(kind, 1L, Long::sum);
  }

  long errorCount() {
    return errors.values().stream().mapToLong(Long::longValue).sum();
  }

  /** Requests of the window that never completed (still open when the run was cut). */
  long unfinished() {
    return dispatched - completed;
  }

  static long clamp(long micros) {
    return Math.max(0, Math.min(MAX_MICROS, micros));
  }

  /** Adds {@code o} into this instance. */
  void add(OpenLoopStats o) {
    latency.add(o.latency);
    sendLatency.add(o.sendLatency);
    lag.add(o.lag);
    o.errors.forEach((k, n) -> errors.merge(k, n, Long::sum));
    dispatched += o.dispatched;
    completed += o.completed;
    completedInWindow += o.completedInWindow;
    maxQueued = Math.max(maxQueued, o.maxQueued);
    calls += o.calls;
    deletes += o.deletes;
    deleteErrors += o.deleteErrors;
  }

  OpenLoopStats copy() {
    OpenLoopStats c = new OpenLoopStats();
    c.add(this);
    c.maxQueued = maxQueued;
    return c;
  }
}
