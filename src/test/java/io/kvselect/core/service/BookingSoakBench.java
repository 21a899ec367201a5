package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.tools.loadgen.BenchEnv;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Issue 21's soak row: minutes of {@code select_and_reserve} + free cycles in approximate mode
 * (the index records every booking's blocks with the 120 s TTL, on the real clock, housekeeping
 * every 5 s as a node runs it), and per minute the cycle rate, the {@code select} rate measured
 * right after, the index size and the heap after a full GC. The same service, workers and
 * prompts as {@link AfterBookingsBench} (64 workers, 32 prompts of 2,048-8,192 tokens, the index
 * warmed by pinned bookings); one thread. A leak shows as a heap or index that grows minute over
 * minute, or a select rate that falls. Prints a Markdown table with the command, machine and
 * commit.
 *
 * <pre>
 * mvn -B -q -o test-compile
 * mvn -B -q -o dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -Xmx1g -cp target/classes:target/test-classes:$(cat target/cp.txt) io.kvselect.core.service.BookingSoakBench 30 50 10
 * </pre>
 */
public final class BookingSoakBench {

  private static final int WORKERS = 64;
  private static final long HOUSEKEEPING_NANOS = 5_000_000_000L;

  public static void main(String[] args) {
    int minutes = args.length > 0 ? Integer.parseInt(args[0]) : 30;
    double cycleSecs = args.length > 1 ? Double.parseDouble(args[1]) : 50;
    double selectSecs = args.length > 2 ? Double.parseDouble(args[2]) : 10;
    System.out.printf(
        Locale.ROOT,
        "BookingSoakBench %d %s %s: %d CPUs, %s, %s, heap max %d MiB, commit %s%n%n",
        minutes,
        cycleSecs,
        selectSecs,
        BenchEnv.cpus(),
        BenchEnv.cpuModel(),
        BenchEnv.javaVersion(),
        Runtime.getRuntime().maxMemory() >> 20,
        BenchEnv.gitCommit());
    RouterConfig cfg =
        RouterConfigLoader.fromEnv(
            RouterConfig.DEFAULTS, Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    SelectionService svc =
        SelectionService.builder()
            .routerConfig(cfg)
            .clock(Clock.systemUTC())
            .random(new Random(5))
            .build();
    for (int w = 1; w <= WORKERS; w++) {
      SelectionServiceTest.join(
          svc.upsertWorker(
              WorkerSpec.builder(w)
                  .endpoint("http://w" + w)
                  .blockSize(16)
                  .maxNumBatchedTokens(8192L)
                  .build()));
    }
    int[][] prompts = AfterBookingsBench.prompts();
    AfterBookingsBench.warm(svc, prompts);
    long[] housekeeping = {System.nanoTime() + HOUSEKEEPING_NANOS};
    System.out.printf(
        Locale.ROOT,
        "| minute | cycles/s | selects/s after | index blocks | bookings alive | heap after GC MiB |%n");
    System.out.printf(Locale.ROOT, "|---|---|---|---|---|---|%n");
    System.out.printf(
        Locale.ROOT,
        "| 0 (warm) | - | %.0f | %d | %d | %.1f |%n",
        selects(svc, prompts, selectSecs, housekeeping),
        svc.inspection().indexSize(),
        svc.bookingCount(),
        heapAfterGcMib());
    long n = 0;
    for (int m = 1; m <= minutes; m++) {
      long end = System.nanoTime() + (long) (cycleSecs * 1e9);
      long t0 = System.nanoTime();
      long done = 0;
      while (System.nanoTime() < end) {
        Selection s =
            SelectionServiceTest.join(
                svc.select(
                    AfterBookingsBench.req("c" + n, prompts[(int) (n % prompts.length)], null),
                    true));
        SelectionServiceTest.join(svc.free(s.selectionId()));
        n++;
        done++;
        housekeep(svc, housekeeping);
      }
      double cycles = done / ((System.nanoTime() - t0) / 1e9);
      double sel = selects(svc, prompts, selectSecs, housekeeping);
      System.out.printf(
          Locale.ROOT,
          "| %d | %.0f | %.0f | %d | %d | %.1f |%n",
          m,
          cycles,
          sel,
          svc.inspection().indexSize(),
          svc.bookingCount(),
          heapAfterGcMib());
    }
  }

  /** The node's housekeeping ({@code MainVerticle}: {@code expire()} every 5 s). */
  private static void housekeep(SelectionService svc, long[] next) {
    long now = System.nanoTime();
    if (now >= next[0]) {
      svc.expire();
      next[0] = now + HOUSEKEEPING_NANOS;
    }
  }

  private static double selects(
      SelectionService svc, int[][] prompts, double secs, long[] housekeeping) {
    return AfterBookingsBench.selects(svc, prompts, secs, () -> housekeep(svc, housekeeping));
  }

  private static double heapAfterGcMib() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
  }
}
