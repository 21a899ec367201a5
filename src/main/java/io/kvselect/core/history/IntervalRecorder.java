package io.kvselect.core.history;

import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * What happened to selections since the last {@link #drain}: how many succeeded, their decision
 * latencies (a uniform reservoir of at most {@code reservoir} of them, so memory stays bounded
 * under any rate) and the prompt tokens booked with how many of them were credited as cached.
 *
 * <p>Ownership: written by every HTTP event loop (one call per answered selection or booking)
 * and drained by the history sampler; every method holds this recorder's monitor, which costs a
 * few nanoseconds next to a selection. The reservoir's random choices come from a seeded
 * generator so tests are repeatable.
 */
public final class IntervalRecorder {

  /** One interval's totals: {@code p99Nanos} is -1 when no selection was answered. */
  public record Interval(long selections, long p99Nanos, long promptTokens, long cachedTokens) {

    /** The share of booked prompt tokens found cached, or NaN when nothing was booked. */
    public double cachedShare() {
      return promptTokens == 0 ? Double.NaN : (double) cachedTokens / promptTokens;
    }
  }

  private final long[] latencies;
  private final RandomGenerator rng;
  private long selections;
  private long seen;
  private long promptTokens;
  private long cachedTokens;

  /** Keeps up to {@code reservoir} latencies per interval; {@code rng} picks which beyond that. */
  public IntervalRecorder(int reservoir, RandomGenerator rng) {
    if (reservoir < 1) {
      throw new IllegalArgumentException("reservoir must be at least 1, got " + reservoir);
    }
    this.latencies = new long[reservoir];
    this.rng = rng;
  }

  /** A selection answered successfully after {@code nanos}. */
  public synchronized void selected(long nanos) {
    selections++;
    if (seen < latencies.length) {
      latencies[(int) seen] = nanos;
    } else {
      long j = rng.nextLong(seen + 1);
      if (j < latencies.length) {
        latencies[(int) j] = nanos;
      }
    }
    seen++;
  }

  /** A booking of {@code islTokens} prompt tokens of which {@code cached} were credited as cached. */
  public synchronized void booked(long islTokens, long cached) {
    promptTokens += Math.max(0, islTokens);
    cachedTokens += Math.max(0, Math.min(cached, islTokens));
  }

  /** This interval's totals; starts the next interval. */
  public synchronized Interval drain() {
    int n = (int) Math.min(seen, latencies.length);
    long p99 = -1;
    if (n > 0) {
      long[] sorted = Arrays.copyOf(latencies, n);
      Arrays.sort(sorted);
      p99 = sorted[Math.min(n - 1, (int) Math.ceil(0.99 * n) - 1)];
    }
    Interval out = new Interval(selections, p99, promptTokens, cachedTokens);
    selections = 0;
    seen = 0;
    promptTokens = 0;
    cachedTokens = 0;
    return out;
  }
}
