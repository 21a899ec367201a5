package io.kvselect.tools.loadgen;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Outcomes and latencies of the requests of one {@link QueueLoadSender}, or the merge of several.
 * Latencies are in microseconds, from the request's intended send time (open loop) to the end of
 * its response body. Mutable and not thread-safe: a sender's instance is written only by its
 * event loop and read by the main thread after {@link QueueLoadSender#stats()} has handed it over
 * through that event loop.
 */
final class QueueLoadStats {

  private static final long MAX_MICROS = TimeUnit.HOURS.toMicros(1);

  final Histogram served = new Histogram(MAX_MICROS, 3);

  /** Latencies of every 429, whatever its {@code limit_kind}. */
  final Histogram rejected = new Histogram(MAX_MICROS, 3);

  /** Latencies of 429 by {@code details.limit_kind} ({@code "none"} when the body has none). */
  final Map<String, Histogram> rejectedByKind = new TreeMap<>();

  /** Other outcomes: {@code "HTTP <status>"} or {@code "error: <exception class>"}. */
  final Map<String, Long> other = new TreeMap<>();

  long sent;

  /** Largest delay between a request's intended and actual send time, in microseconds. */
  long maxSendLagMicros;

  long prefillCompleteErrors;
  long freeErrors;

  void servedMicros(long micros) {
    served.recordValue(clamp(micros));
  }

  void rejectedMicros(String kind, long micros) {
    rejected.recordValue(clamp(micros));
    rejectedByKind
        .computeIfAbsent(kind, k -> new Histogram(MAX_MICROS, 3))
        .recordValue(clamp(micros));
  }

  void other(String what) {
    other.merge(what, 1L, Long::sum);
  }

  long rejectedCount(String kind) {
    Histogram h = rejectedByKind.get(kind);
    return h == null ? 0 : h.getTotalCount();
  }

  long otherCount() {
    return other.values().stream().mapToLong(Long::longValue).sum();
  }

  /** Adds {@code o} into this instance. */
  void add(QueueLoadStats o) {
    served.add(o.served);
    rejected.add(o.rejected);
    o.rejectedByKind.forEach(
        (k, h) -> rejectedByKind.computeIfAbsent(k, x -> new Histogram(MAX_MICROS, 3)).add(h));
    o.other.forEach((k, n) -> other.merge(k, n, Long::sum));
    sent += o.sent;
    maxSendLagMicros = Math.max(maxSendLagMicros, o.maxSendLagMicros);
    prefillCompleteErrors += o.prefillCompleteErrors;
    freeErrors += o.freeErrors;
  }

  private static long clamp(long micros) {
    return Math.max(0, Math.min(MAX_MICROS, micros));
  }
}
