package io.kvselect.tools.loadgen;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@code kvselect-bench-feeder} thread: hands pre-encoded workload batches to the rig's
 * publishers, either as fast as the node takes them ({@link #flood}) or at a fixed total rate
 * ({@link #paced}, one token bucket per publisher).
 *
 * <p>Flood keeps at most {@code window} batches per rank in flight (published but not yet
 * delivered to the coordinator), so the publishers' PUB high-water mark (100,000) is never reached
 * and no batch is dropped by ZMQ: the measured rate is what the node applies, not what it loses.
 * Paced mode has no such feedback: a node that falls behind shows growing lag and, past the
 * high-water marks, gaps. Both modes stop offering to a publisher whose own thread has
 * {@code maxUnsent} batches queued and not yet written (then {@link #skippedBlocks()} grows).
 *
 * <p>Lag is sampled every {@value #LAG_SAMPLE_MS} ms on this thread, both in batches (published
 * to a rank and not yet delivered by it) and as time ({@link LagTracker}: the age of the rank's
 * oldest published and undelivered batch).
 *
 * <p>Threading: the counters and the rig's {@link LagTracker} are written by the feeder thread and
 * read after {@link #stop()}, which joins it.
 */
final class Feeder implements Runnable {

  private static final long LAG_SAMPLE_MS = 10;
  private static final long IDLE_PARK_NS = TimeUnit.MICROSECONDS.toNanos(100);
  private static final int MAX_UNSENT = 50_000;

  private final IngestRig rig;
  private final IngestWorkload[] work;
  private final int window;
  private final double blocksPerSecondEach;
  private final long[] sent;
  private final Thread thread;
  private volatile boolean running = true;
  private long maxLag;
  private final long[] lagBySecond = new long[3_600];
  private long startNanos;
  private long maxUnsent;
  private long skippedBlocks;

  private Feeder(IngestRig rig, IngestWorkload[] work, int window, double blocksPerSecond) {
    this.rig = rig;
    this.work = work.clone();
    this.window = window;
    this.blocksPerSecondEach = blocksPerSecond / work.length;
    this.sent = new long[work.length];
    this.thread = new Thread(this, "kvselect-bench-feeder");
    this.thread.setDaemon(true);
  }

  /** A feeder that keeps {@code window} batches in flight per rank. */
  static Feeder flood(IngestRig rig, IngestWorkload[] work, int window) {
    if (window < 1) {
      throw new IllegalArgumentException("window must be positive");
    }
    return new Feeder(rig, work, window, 0);
  }

  /** A feeder offering {@code blocksPerSecond} in total, split evenly over the publishers. */
  static Feeder paced(IngestRig rig, IngestWorkload[] work, double blocksPerSecond) {
    if (!(blocksPerSecond > 0)) {
      throw new IllegalArgumentException("rate must be positive");
    }
    return new Feeder(rig, work, 0, blocksPerSecond);
  }

  void start() {
    thread.start();
  }

  /** Stops offering and joins the thread (bounded). */
  void stop() throws InterruptedException {
    running = false;
    thread.join(10_000);
    if (thread.isAlive()) {
      throw new IllegalStateException("feeder thread did not stop");
    }
  }

  @Override
  public void run() {
    startNanos = System.nanoTime();
    rig.lag().start(startNanos);
    if (window > 0) {
      flood();
    } else {
      paced();
    }
  }

  private void flood() {
    long nextSample = 0;
    while (running) {
      long sampledAt = System.nanoTime();
      long[] delivered = rig.deliveredSeqs();
      boolean progressed = false;
      for (int p = 0; p < work.length && running; p++) {
        long inFlight = rig.published(p) - 1 - delivered[p];
        for (long room = window - inFlight; room > 0 && unsentOk(p); room--) {
          send(p);
          progressed = true;
        }
      }
      long now = System.nanoTime();
      if (now >= nextSample) {
        sampleLag(delivered, sampledAt);
        nextSample = now + TimeUnit.MILLISECONDS.toNanos(LAG_SAMPLE_MS);
      }
      if (!progressed) {
        LockSupport.parkNanos(IDLE_PARK_NS);
      }
    }
  }

  private void paced() {
    int n = work.length;
    double[] tokens = new double[n];
    double capacity = Math.max(work[0].blocksPerBatch(), blocksPerSecondEach * 0.01);
    long last = System.nanoTime();
    long nextSample = last;
    while (running) {
      long now = System.nanoTime();
      double add = blocksPerSecondEach * (now - last) / 1e9;
      last = now;
      for (int p = 0; p < n; p++) {
        double t = tokens[p] + add;
        int blocks = work[p].blocksPerBatch();
        while (t >= blocks && unsentOk(p)) {
          send(p);
          t -= blocks;
        }
        if (t > capacity) {
          skippedBlocks += (long) (t - capacity);
          t = capacity;
        }
        tokens[p] = t;
      }
      if (now >= nextSample) {
        long sampledAt = System.nanoTime();
        sampleLag(rig.deliveredSeqs(), sampledAt);
        nextSample = now + TimeUnit.MILLISECONDS.toNanos(LAG_SAMPLE_MS);
      }
      LockSupport.parkNanos(IDLE_PARK_NS);
    }
  }

  private boolean unsentOk(int p) {
    return rig.unsent(p) < MAX_UNSENT;
  }

  private void send(int p) {
    rig.publish(p, work[p].payload(sent[p]));
    sent[p]++;
  }

  /**
   * {@code sampledAt} is taken before {@code delivered} was read, so a batch seen undelivered was
   * undelivered at {@code sampledAt} too: every lag sample is a lower bound of the true lag.
   */
  private void sampleLag(long[] delivered, long sampledAt) {
    long now = sampledAt;
    rig.lag().sample(delivered, now);
    int second = (int) Math.min(lagBySecond.length - 1, (now - startNanos) / 1_000_000_000L);
    for (int p = 0; p < work.length; p++) {
      long lag = rig.published(p) - 1 - delivered[p];
      maxLag = Math.max(maxLag, lag);
      lagBySecond[second] = Math.max(lagBySecond[second], lag);
      maxUnsent = Math.max(maxUnsent, rig.unsent(p));
    }
  }

  /** Workload batches handed to publisher {@code p}. */
  long sent(int p) {
    return sent[p];
  }

  /** Largest sampled number of batches published to one rank and not yet delivered by it. */
  long maxLag() {
    return maxLag;
  }

  /** Largest sampled lag (as {@link #maxLag()}) in seconds {@code [from, to)} after the start. */
  long maxLag(int from, int to) {
    long m = 0;
    for (int i = Math.max(0, from); i < Math.min(to, lagBySecond.length); i++) {
      m = Math.max(m, lagBySecond[i]);
    }
    return m;
  }

  /** Largest sampled lag as time (nanoseconds) in seconds {@code [from, to)} after the start, any rank. */
  long maxLagNanos(int from, int to) {
    return rig.lag().maxNanos(from, to);
  }

  /** Largest sampled lag as time (nanoseconds), any rank, whole run. */
  long maxLagNanos() {
    return rig.lag().maxNanos();
  }

  /** Largest sampled lag as time (nanoseconds) of rank {@code p}, whole run. */
  long maxLagNanos(int p) {
    return rig.lag().maxNanos(p);
  }

  /** Whether a lag sample was a lower bound (a rank further behind than the publish times kept). */
  boolean lagTruncated() {
    return rig.lag().truncated();
  }

  /** Largest sampled queue of one publisher thread (batches handed over and not yet written). */
  long maxUnsent() {
    return maxUnsent;
  }

  /** Paced mode: blocks the buckets could not spend in time (feeder or publishers too slow). */
  long skippedBlocks() {
    return skippedBlocks;
  }
}
