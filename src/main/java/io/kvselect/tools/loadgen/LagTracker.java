package io.kvselect.tools.loadgen;

/**
 * Per-rank ingest lag as time: for each rank, when each batch was handed to its publisher, and on
 * every sample the age of the oldest batch handed over and not yet delivered to the node's
 * coordinator.
 *
 * <p>Definition. Batch {@code n} of rank {@code p} (0-based, the publisher's sequence number) is
 * <em>published</em> at the {@link System#nanoTime()} passed to {@link #published} (the moment the
 * feeder hands it to the publisher) and <em>delivered</em> once the node's rank session reports a
 * last sequence number of at least {@code n} (the session counts a batch right before its
 * poller thread decodes and applies it, so delivered means applied or being applied). The lag of
 * rank {@code p} at time {@code t} is {@code t - published(oldest undelivered batch)}, or 0 when
 * every published batch is delivered. It therefore includes the publisher thread's queue, ZMQ
 * and TCP buffers, and the node's queue. {@link #sample} records the maximum over ranks, per
 * second since {@link #start}.
 *
 * <p>Only the last {@code capacity} publish times of a rank are kept: a rank more than
 * {@code capacity} batches behind gets the age of the oldest time kept, a lower bound, and
 * {@link #truncated()} says so.
 *
 * <p>Threading: confined to one thread at a time (the benchmark's feeder, which both publishes and
 * samples; handed over with {@link Thread#start} and {@link Thread#join}).
 */
final class LagTracker {

  private final long[][] stamps;
  private final long[] count;
  private final int mask;
  private final long[] maxBySecond;
  private final long[] maxByRank;
  private long startNanos;
  private long maxNanos;
  private boolean truncated;

  /**
   * @param ranks number of ranks tracked
   * @param capacity publish times kept per rank (rounded up to a power of two)
   * @param seconds length of the per-second record; later samples go to its last second
   */
  LagTracker(int ranks, int capacity, int seconds) {
    if (ranks < 1 || capacity < 1 || seconds < 1) {
      throw new IllegalArgumentException("ranks, capacity and seconds must be positive");
    }
    int cap = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
    this.stamps = new long[ranks][cap];
    this.count = new long[ranks];
    this.mask = cap - 1;
    this.maxBySecond = new long[seconds];
    this.maxByRank = new long[ranks];
  }

  /** Second 0 of the per-second record starts at {@code nanos}; resets every maximum. */
  void start(long nanos) {
    startNanos = nanos;
    java.util.Arrays.fill(maxBySecond, 0);
    java.util.Arrays.fill(maxByRank, 0);
    maxNanos = 0;
    truncated = false;
  }

  /** Batch number {@code count(p)} of rank {@code p} was handed to its publisher at {@code nanos}. */
  void published(int p, long nanos) {
    stamps[p][(int) (count[p] & mask)] = nanos;
    count[p]++;
  }

  /** Batches published to rank {@code p} so far. */
  long count(int p) {
    return count[p];
  }

  /**
   * The lag of rank {@code p} at {@code nowNanos} when its last delivered sequence number is
   * {@code deliveredSeq} (-1 for none).
   */
  long lagNanos(int p, long deliveredSeq, long nowNanos) {
    long oldest = deliveredSeq + 1;
    if (oldest >= count[p]) {
      return 0;
    }
    if (count[p] - oldest > mask + 1) {
      truncated = true;
      oldest = count[p] - (mask + 1);
    }
    return Math.max(0, nowNanos - stamps[p][(int) (oldest & mask)]);
  }

  /**
   * Samples every rank at {@code nowNanos} ({@code delivered[p]} = rank p's last delivered
   * sequence number); returns the largest lag of this sample.
   */
  long sample(long[] delivered, long nowNanos) {
    long m = 0;
    for (int p = 0; p < count.length; p++) {
      long lag = lagNanos(p, delivered[p], nowNanos);
      maxByRank[p] = Math.max(maxByRank[p], lag);
      m = Math.max(m, lag);
    }
    int second =
        (int)
            Math.max(0, Math.min(maxBySecond.length - 1, (nowNanos - startNanos) / 1_000_000_000L));
    maxBySecond[second] = Math.max(maxBySecond[second], m);
    maxNanos = Math.max(maxNanos, m);
    return m;
  }

  /** Largest lag sampled since {@link #start}, any rank. */
  long maxNanos() {
    return maxNanos;
  }

  /** Largest lag sampled for rank {@code p} since {@link #start}. */
  long maxNanos(int p) {
    return maxByRank[p];
  }

  /** Largest lag sampled in seconds {@code [from, to)} after {@link #start}, any rank. */
  long maxNanos(int from, int to) {
    long m = 0;
    for (int i = Math.max(0, from); i < Math.min(to, maxBySecond.length); i++) {
      m = Math.max(m, maxBySecond[i]);
    }
    return m;
  }

  /** Whether some sample saw a rank further behind than the publish times kept (its lag is a lower bound). */
  boolean truncated() {
    return truncated;
  }
}
