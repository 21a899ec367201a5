package io.kvselect.tools.chaos;

import org.HdrHistogram.Histogram;

/**
 * Percentiles of a set of call latencies in milliseconds; {@code count == 0} means nothing was
 * measured. Immutable.
 */
record Latency(long count, double p50Ms, double p99Ms, double maxMs) {

  static final Latency NONE = new Latency(0, 0, 0, 0);

  /** The summary of a histogram of microseconds. */
  static Latency of(Histogram us) {
    if (us.getTotalCount() == 0) {
      return NONE;
    }
    return new Latency(
        us.getTotalCount(),
        us.getValueAtPercentile(50) / 1000.0,
        us.getValueAtPercentile(99) / 1000.0,
        us.getMaxValue() / 1000.0);
  }

  /** {@code 1.2 / 8.4 / 2001.0 (n=3,412)}, or an em dash when nothing was measured. */
  String cell() {
    if (count == 0) {
      return "—";
    }
    return String.format(
        java.util.Locale.ROOT, "%s / %s / %s (n=%,d)", ms(p50Ms), ms(p99Ms), ms(maxMs), count);
  }

  private static String ms(double v) {
    return v >= 100
        ? String.format(java.util.Locale.ROOT, "%.0f", v)
        : String.format(java.util.Locale.ROOT, "%.1f", v);
  }
}
