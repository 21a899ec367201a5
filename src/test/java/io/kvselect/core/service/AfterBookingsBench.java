package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Issue 21's first defect at the core: {@code select} throughput on one thread before and after
 * many {@code select_and_reserve} + free cycles (all freed), and after the approximate TTL, in
 * both index modes; 64 workers, 32 prompts of 2,048-8,192 tokens, the approximate index warmed
 * by pinned bookings (worker k holds the first k/64 of every prompt; the event index stays empty,
 * no engine). Each phase runs unmeasured for the same time first (JIT). Prints a Markdown table.
 *
 * <pre>
 * mvn -B -q -o test-compile
 * mvn -B -q -o dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp target/classes:target/test-classes:$(cat target/cp.txt) io.kvselect.core.service.AfterBookingsBench 5 200000
 * </pre>
 */
public final class AfterBookingsBench {

  private static final PartitionKey P = new PartitionKey(null, null);
  private static final int WORKERS = 64;

  public static void main(String[] args) {
    double secs = args.length > 0 ? Double.parseDouble(args[0]) : 5;
    int cycles = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
    System.out.println("| mode | phase | selects/s | bookings alive | load rows |");
    System.out.println("|---|---|---|---|---|");
    for (boolean events : new boolean[] {false, true}) {
      run(events, secs, cycles);
    }
  }

  private static void run(boolean events, double secs, int cycles) {
    MutableClock clock = new MutableClock();
    Map<String, String> env = new HashMap<>();
    env.put("DYN_ROUTER_USE_KV_EVENTS", String.valueOf(events));
    RouterConfig cfg = RouterConfigLoader.fromEnv(RouterConfig.DEFAULTS, env);
    SelectionService svc =
        SelectionService.builder().routerConfig(cfg).clock(clock).random(new Random(5)).build();
    for (int w = 1; w <= WORKERS; w++) {
      SelectionServiceTest.join(
          svc.upsertWorker(
              WorkerSpec.builder(w)
                  .endpoint("http://w" + w)
                  .kvEventsEndpoint(events ? "tcp://127.0.0.1:1" : null)
                  .blockSize(16)
                  .maxNumBatchedTokens(8192L)
                  .build()));
    }
    int[][] prompts = prompts();
    if (!events) {
      warm(svc, prompts);
    }
    String mode = events ? "events" : "approximate";
    selects(svc, prompts, secs); // the JIT's turn, not measured
    row(mode, "warm", selects(svc, prompts, secs), svc);
    for (int i = 0; i < cycles; i++) {
      Selection s =
          SelectionServiceTest.join(
              svc.select(req("c" + i, prompts[i % prompts.length], null), true));
      SelectionServiceTest.join(svc.free(s.selectionId()));
    }
    row(mode, "after " + cycles + " cycles", selects(svc, prompts, secs), svc);
    clock.advance(Duration.ofMinutes(10));
    svc.expire();
    row(mode, "after 10 min (past the TTL)", selects(svc, prompts, secs), svc);
  }

  /** 32 prompts of 2,048-8,192 random tokens (seed 1); {@link BookingSoakBench} uses the same. */
  static int[][] prompts() {
    Random rnd = new Random(1);
    int[][] prompts = new int[32][];
    for (int i = 0; i < prompts.length; i++) {
      prompts[i] = new int[2048 + rnd.nextInt(6145)];
      for (int j = 0; j < prompts[i].length; j++) {
        prompts[i][j] = rnd.nextInt(100_000);
      }
    }
    return prompts;
  }

  /** Warms the approximate index: worker k holds the first k/64 of every prompt (booked and freed). */
  static void warm(SelectionService svc, int[][] prompts) {
    for (int w = 1; w <= WORKERS; w++) {
      for (int[] p : prompts) {
        int[] prefix = java.util.Arrays.copyOf(p, Math.max(16, p.length * w / WORKERS));
        Selection s =
            SelectionServiceTest.join(svc.select(req("warm", prefix, new WorkerRank(w, 0)), true));
        SelectionServiceTest.join(svc.free(s.selectionId()));
      }
    }
  }

  static SelectRequest req(String id, int[] tokens, WorkerRank pin) {
    return new SelectRequest(
        P,
        id,
        PromptInput.tokens(tokens),
        null,
        null,
        null,
        null,
        null,
        pin,
        null,
        null,
        null,
        false,
        null,
        null,
        null);
  }

  private static double selects(SelectionService svc, int[][] prompts, double secs) {
    return selects(svc, prompts, secs, () -> {});
  }

  /** {@code select} calls per second for {@code secs}, running {@code between} after each call. */
  static double selects(SelectionService svc, int[][] prompts, double secs, Runnable between) {
    long end = System.nanoTime() + (long) (secs * 1e9);
    long n = 0;
    long t0 = System.nanoTime();
    while (System.nanoTime() < end) {
      SelectionServiceTest.join(
          svc.select(req("q", prompts[(int) (n % prompts.length)], null), false));
      n++;
      between.run();
    }
    return n / ((System.nanoTime() - t0) / 1e9);
  }

  private static void row(String mode, String phase, double rate, SelectionService svc) {
    System.out.printf(
        Locale.ROOT,
        "| %s | %s | %.0f | %d | %s |%n",
        mode,
        phase,
        rate,
        svc.bookingCount(),
        svc.inspection().loads(null, null).stream().mapToLong(l -> l.loads().size()).sum());
  }
}
