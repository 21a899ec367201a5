package io.kvselect.tools.loadgen;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.vertx.core.Future;
import io.vertx.core.ThreadingModel;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.VertxInternal;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * An HTTP load generator on its own Vert.x instance: {@code eventLoops} {@link OpenLoopSender}s,
 * one per event loop, share a fixed pool of {@code connections} keep-alive HTTP/1.1 connections
 * (split evenly, pipelining off) and send pre-encoded bodies (Vert.x buffers over direct memory,
 * encoded once, written to the socket without a copy per request).
 *
 * <p>Open loop ({@link OpenLoopOptions.Mode#OPEN}): request {@code i} is due {@code i / rate}
 * seconds after the start; one pacer thread parks until each due instant and wakes the sender
 * that owns the request. A sender that is late, or has no free connection, still measures the
 * request from its intended instant (coordinated omission corrected). Closed loop: every
 * connection sends its next request when the previous one is answered. Only requests due (open)
 * or sent (closed) in the measured window, after the warm-up, are counted.
 *
 * <p>Stateless: {@link #run} owns everything it starts (the Vert.x instance and the pacer thread)
 * and stops it before returning.
 */
final class OpenLoopGenerator {

  /** Time between building the plan and the first due instant, for the deployment. */
  private static final long START_DELAY_NANOS = 300_000_000L;

  private OpenLoopGenerator() {}

  /**
   * A finished run; immutable once built. {@code t0Nanos} is the {@link System#nanoTime()} instant
   * request 0 was due (the start of the warm-up); {@code cpuNanos} the CPU time this JVM used
   * from then to the end of the run (-1 where the JVM cannot tell); {@code threads} the number of
   * distinct event-loop threads the senders ran on.
   */
  record Result(
      OpenLoopOptions.Mode mode,
      double offeredRate,
      double seconds,
      int eventLoops,
      int connections,
      long t0Nanos,
      long cpuNanos,
      int threads,
      OpenLoopStats stats) {

    /** CPU time of this whole JVM from the start of the schedule to the end of the run, per HTTP call. */
    double cpuMicrosPerCall() {
      return stats.calls == 0 || cpuNanos < 0 ? Double.NaN : cpuNanos / 1e3 / stats.calls;
    }

    /** Answers and failures that ended inside the window, per second of window. */
    double achievedRate() {
      return stats.completedInWindow / seconds;
    }

    /** Corrected latency at percentile {@code q} (0-100), in milliseconds. */
    double ms(double q) {
      return stats.latency.getTotalCount() == 0
          ? Double.NaN
          : stats.latency.getValueAtPercentile(q) / 1000.0;
    }

    /** Uncorrected (from the actual send) latency at percentile {@code q}, in milliseconds. */
    double sendMs(double q) {
      return stats.sendLatency.getTotalCount() == 0
          ? Double.NaN
          : stats.sendLatency.getValueAtPercentile(q) / 1000.0;
    }

    /** Largest delay of the generator behind its schedule, in milliseconds. */
    double maxLagMs() {
      return stats.lag.getMaxValue() / 1000.0;
    }

    double lagMs(double q) {
      return stats.lag.getTotalCount() == 0 ? 0 : stats.lag.getValueAtPercentile(q) / 1000.0;
    }

    /** Requests the schedule put into the window. */
    long planned() {
      return Math.round(offeredRate * seconds);
    }

    /**
     * Whether the generator kept its schedule: it took up every request the window planned (one
     * either way for rounding) and 99% of them no later than {@code maxLagMs} after their instant.
     */
    boolean onSchedule(double maxLagMs) {
      return mode == OpenLoopOptions.Mode.CLOSED
          || (Math.abs(stats.dispatched - planned()) <= 1 && lagMs(99) <= maxLagMs);
    }

    long errors() {
      return stats.errorCount() + stats.unfinished() + stats.deleteErrors;
    }
  }

  /** Runs {@code o} and returns what it measured; blocks the calling thread (never an event loop). */
  static Result run(OpenLoopOptions o) throws Exception {
    o.validate();
    int n = o.eventLoops;
    Vertx vertx = Vertx.builder().with(new VertxOptions().setEventLoopPoolSize(n)).build();
    Thread pacer = null;
    Pacer pacing = null;
    try {
      long t0 = System.nanoTime() + START_DELAY_NANOS;
      long windowStart = t0 + (long) (o.warmupSeconds * 1e9);
      long windowEnd = windowStart + (long) (o.seconds * 1e9);
      double nanosPerRequest = o.mode == OpenLoopOptions.Mode.OPEN ? 1e9 / o.rate : 0;
      long total =
          o.mode == OpenLoopOptions.Mode.OPEN
              ? (long) Math.ceil((windowEnd - t0) / nanosPerRequest)
              : 0;
      OpenLoopSender.Plan plan =
          new OpenLoopSender.Plan(
              o.mode,
              o.host,
              o.port,
              o.path,
              n,
              total,
              nanosPerRequest,
              t0,
              windowStart,
              windowEnd,
              o.bodies,
              o.deleteReservations,
              o.requestTimeoutMs);
      List<OpenLoopSender> senders = new ArrayList<>(n);
      int k = 0;
      // one context per event loop, built on that loop: deployments do not pick distinct loops
      // reliably (two verticles deployed from one thread often shared the first)
      for (EventExecutor loop : ((VertxInternal) vertx).nettyEventLoopGroup()) {
        ContextInternal ctx =
            ((VertxInternal) vertx)
                .contextBuilder()
                .withThreadingModel(ThreadingModel.EVENT_LOOP)
                .withEventLoop((EventLoop) loop)
                .build();
        OpenLoopSender s =
            new OpenLoopSender(k, o.connections / n + (k < o.connections % n ? 1 : 0), plan);
        senders.add(s);
        await(s.start(ctx), 30_000);
        k++;
      }
      if (k != n) {
        throw new IllegalStateException("Vert.x made " + k + " event loops, " + n + " asked for");
      }
      long cpu0 = processCpuNanos();
      if (o.mode == OpenLoopOptions.Mode.OPEN) {
        pacing = new Pacer(plan, senders);
        pacer = new Thread(pacing, "openloop-pacer");
        pacer.setDaemon(true);
        pacer.start();
      }
      long waitMs = Math.max(1, (windowEnd - System.nanoTime()) / 1_000_000 + o.drainTimeoutMs);
      try {
        await(Future.all(senders.stream().map(OpenLoopSender::finished).toList()), waitMs);
      } catch (TimeoutException e) {
        // requests still open at the cut are reported as unfinished
      }
      long cpu1 = processCpuNanos();
      OpenLoopStats merged = new OpenLoopStats();
      for (OpenLoopSender s : senders) {
        merged.add(await(s.stats(), 10_000));
      }
      int threads = (int) senders.stream().map(OpenLoopSender::thread).distinct().count();
      return new Result(
          o.mode,
          o.rate,
          o.seconds,
          n,
          o.connections,
          t0,
          cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0,
          threads,
          merged);
    } finally {
      if (pacing != null) {
        pacing.stop = true;
        LockSupport.unpark(pacer);
        pacer.join(5_000);
      }
      await(vertx.close(), 30_000);
    }
  }

  /** CPU time of this JVM (every thread, GC and JIT included), or -1. */
  static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return -1;
  }

  private static <T> T await(Future<T> f, long ms) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(ms, TimeUnit.MILLISECONDS);
  }

  /**
   * Parks until each request's due instant and signals its sender; a late pacer signals at once
   * (senders coalesce signals, so one wake-up takes up every request due by then). Runs on its
   * own thread; {@link #stop} is written by the thread that started it.
   */
  private static final class Pacer implements Runnable {
    private final OpenLoopSender.Plan plan;
    private final OpenLoopSender[] senders;
    volatile boolean stop;

    Pacer(OpenLoopSender.Plan plan, List<OpenLoopSender> senders) {
      this.plan = plan;
      this.senders = senders.toArray(new OpenLoopSender[0]);
    }

    @Override
    public void run() {
      int n = senders.length;
      for (long i = 0; i < plan.total() && !stop; i++) {
        long due = plan.due(i);
        long wait;
        while ((wait = due - System.nanoTime()) > 0 && !stop) {
          LockSupport.parkNanos(wait);
        }
        senders[(int) (i % n)].signal();
      }
    }
  }
}
