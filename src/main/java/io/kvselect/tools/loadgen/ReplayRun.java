package io.kvselect.tools.loadgen;

import io.kvselect.core.events.ApplyStats;
import io.kvselect.core.events.EventApplier;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import org.HdrHistogram.Histogram;

/**
 * One replay of a {@link ReplayWorkload} at one offered rate against a fresh index of the kind the
 * node builds ({@link ShardedBlockIndex} of {@link PrefixChainIndex}, one shard per replay
 * thread). Thread {@code t} replays timeline {@code t}: the events of the ranks shard {@code t}
 * owns (one writer per shard, as the node's ingest threads) and those workers' lookups, each
 * operation at its scheduled time ({@code trace time x scale}, the scale set so the whole trace
 * offers {@code rate} lookups/s), or at once when the thread is behind. A rate of 0 replays as
 * fast as possible (every operation due at the start).
 *
 * <p>Per lookup: the call time of the lookup alone (as Dynamo times {@code find_matches}), the
 * call plus the read of its result when reading is on, and the response time from the scheduled
 * instant to the end of the read (coordinated-omission corrected: it includes the time the thread
 * was behind). Confined to the calling thread; the replay threads it starts are joined
 * before {@link #run} returns.
 */
final class ReplayRun {

  private static final long HIGHEST_NS = TimeUnit.SECONDS.toNanos(600);
  private static final long PARK_ABOVE_NS = 200_000;

  /** Which lookup form the replay calls. */
  enum Lookup {
    /** {@link BlockIndex#findMatches(long[])}, an {@link OverlapScores} per lookup (the node's call). */
    SCORES
  }

  /**
   * Figures of one run. {@code offered} is 0 for "as fast as possible". {@code service} times the
   * lookup call alone, {@code serviceRead} the call plus, when the run reads its results, the
   * visit of every scored rank's name and device depth. {@code scored} sums the results' sizes.
   */
  record Result(
      double offered,
      long lookups,
      long elapsedNanos,
      Histogram service,
      Histogram serviceRead,
      Histogram response,
      long maxBehindNanos,
      long rejectedStores,
      long indexSize,
      long scored,
      long cpuNanos) {

    /** CPU time the replay threads used, in seconds (-1 when the JVM cannot measure it). */
    double cpuSeconds() {
      return cpuNanos < 0 ? -1 : cpuNanos / 1e9;
    }

    double seconds() {
      return elapsedNanos / 1e9;
    }

    double lookupsPerSec() {
      return lookups / seconds();
    }
  }

  private ReplayRun() {}

  static Result run(ReplayWorkload w, double rate) throws InterruptedException {
    return run(w, rate, Lookup.SCORES, false);
  }

  /**
   * Replays {@code w} at {@code rate} with lookups of form {@code lookup}; with {@code read},
   * every lookup is followed by a visit of each scored rank (its name and device depth), the
   * least a consumer of the whole result does, and the response time includes it.
   */
  static Result run(ReplayWorkload w, double rate, Lookup lookup, boolean read)
      throws InterruptedException {
    int threads = w.timelines.length;
    ShardedBlockIndex index = new ShardedBlockIndex(threads, PrefixChainIndex::new);
    double nanosPerTick =
        rate <= 0 || w.spanMicros == 0 ? 0.0 : (w.counts.lookups() / rate) * 1e9 / w.spanMicros;
    Worker[] workers = new Worker[threads];
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    Thread[] started = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      workers[t] =
          new Worker(w.timelines[t], index, w.blockSize, nanosPerTick, ready, go, lookup, read);
      started[t] = new Thread(workers[t], "kvselect-replay-" + t);
      started[t].start();
    }
    ready.await();
    long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2);
    for (Worker wk : workers) {
      wk.start = start;
    }
    go.countDown();
    for (Thread th : started) {
      th.join();
    }
    Histogram service = new Histogram(HIGHEST_NS, 3);
    Histogram serviceRead = new Histogram(HIGHEST_NS, 3);
    Histogram response = new Histogram(HIGHEST_NS, 3);
    long end = start;
    long lookups = 0;
    long behind = 0;
    long rejected = 0;
    long scored = 0;
    long cpu = 0;
    for (Worker wk : workers) {
      cpu = cpu < 0 || wk.cpuNanos < 0 ? -1 : cpu + wk.cpuNanos;
      if (wk.failure != null) {
        throw new IllegalStateException("replay thread failed", wk.failure);
      }
      service.add(wk.service);
      serviceRead.add(wk.serviceRead);
      response.add(wk.response);
      end = Math.max(end, wk.end);
      lookups += wk.lookups;
      behind = Math.max(behind, wk.maxBehind);
      rejected += wk.rejected;
      scored += wk.scored;
    }
    return new Result(
        rate,
        lookups,
        end - start,
        service,
        serviceRead,
        response,
        behind,
        rejected,
        index.size(),
        scored,
        cpu);
  }

  /** One replay thread's loop and figures; fields are read after {@code join}. */
  private static final class Worker implements Runnable {
    private final ReplayWorkload.Timeline timeline;
    private final BlockIndex index;
    private final int blockSize;
    private final double nanosPerTick;
    private final CountDownLatch ready;
    private final CountDownLatch go;
    private final Lookup lookup;
    private final boolean read;

    /** What the reads sum (names and depths), so that they cannot be optimised away. */
    long readSum;

    private final BiConsumer<WorkerRank, RankOverlap> scoreReader =
        (rank, o) -> readSum += rank.dpRank() + o.device();
    final Histogram service = new Histogram(HIGHEST_NS, 3);
    final Histogram serviceRead = new Histogram(HIGHEST_NS, 3);
    final Histogram response = new Histogram(HIGHEST_NS, 3);
    volatile long start;
    long end;
    long lookups;
    long maxBehind;
    long rejected;
    long scored;
    long cpuNanos = -1;
    Throwable failure;

    Worker(
        ReplayWorkload.Timeline timeline,
        BlockIndex index,
        int blockSize,
        double nanosPerTick,
        CountDownLatch ready,
        CountDownLatch go,
        Lookup lookup,
        boolean read) {
      this.timeline = timeline;
      this.index = index;
      this.blockSize = blockSize;
      this.nanosPerTick = nanosPerTick;
      this.ready = ready;
      this.go = go;
      this.lookup = lookup;
      this.read = read;
    }

    @Override
    public void run() {
      try {
        ready.countDown();
        go.await();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        boolean cpu = mx.isCurrentThreadCpuTimeSupported();
        long before = cpu ? mx.getCurrentThreadCpuTime() : 0;
        replay();
        cpuNanos = cpu ? mx.getCurrentThreadCpuTime() - before : -1;
      } catch (Throwable e) {
        failure = e;
      }
      end = System.nanoTime();
    }

    private void replay() {
      long[] ticks = timeline.ticks;
      Object[] ops = timeline.ops;
      WorkerRank[] ranks = timeline.ranks;
      long s = start;
      for (int i = 0; i < ops.length; i++) {
        long due = s + (long) (ticks[i] * nanosPerTick);
        long now = System.nanoTime();
        if (due > now) {
          now = waitUntil(due, now);
        } else {
          maxBehind = Math.max(maxBehind, now - due);
        }
        Object op = ops[i];
        if (op instanceof ReplayWorkload.Lookup l) {
          long t2 = lookUp(l.localHashes(), due);
          response.recordValue(Math.min(t2 - due, HIGHEST_NS));
          lookups++;
        } else if (op instanceof ReplayWorkload.Store st) {
          if (!index.store(
              ranks[i],
              StorageTier.DEVICE,
              st.hasParent(),
              st.parentHash(),
              st.externalHashes(),
              st.localHashes())) {
            rejected++;
          }
        } else if (op instanceof ReplayWorkload.Remove rm) {
          index.remove(ranks[i], StorageTier.DEVICE, rm.externalHashes());
        } else {
          ApplyStats a = EventApplier.apply(index, ranks[i], blockSize, false, (KvEventBatch) op);
          rejected += a.rejectedStores();
        }
      }
    }

    /** One lookup of the configured form, timed; returns when it (and its read) ended. */
    private long lookUp(long[] q, long due) {
      long t0;
      long t1;
      t0 = System.nanoTime();
      OverlapScores scores = index.findMatches(q);
      t1 = System.nanoTime();
      scored += scores.size();
      if (read) {
        scores.forEach(scoreReader);
      }
      long t2 = System.nanoTime();
      service.recordValue(Math.min(t1 - t0, HIGHEST_NS));
      serviceRead.recordValue(Math.min(t2 - t0, HIGHEST_NS));
      return t2;
    }

    private static long waitUntil(long due, long now) {
      while (due - now > PARK_ABOVE_NS) {
        LockSupport.parkNanos(due - now - PARK_ABOVE_NS / 2);
        now = System.nanoTime();
      }
      while (now < due) {
        Thread.onSpinWait();
        now = System.nanoTime();
      }
      return now;
    }
  }
}
