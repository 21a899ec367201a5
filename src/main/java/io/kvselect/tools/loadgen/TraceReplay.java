package io.kvselect.tools.loadgen;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-bench replay}: Dynamo's {@code mooncake_bench} method on a Mooncake trace
 * ({@link ReplayWorkload} builds the merged timeline, {@link ReplayRun} replays it). After
 * {@code --warmup} unrecorded warm-up passes (3), it replays the trace once per offered rate (lookups/s, ascending),
 * each time against a fresh index, then once as fast as possible, and prints a Markdown table:
 * offered and achieved lookups/s, block-ops/s, events/s, p50/p99/p99.9 of the
 * lookup call (and of the call plus a read of every scored rank, with {@code --read all}), p99
 * of the response time from the scheduled instant, how far the
 * replay fell behind, and the knee (the highest offered rate achieved to within 5%).
 *
 * <p>A harness, not a test: exits 0 after printing, 2 for a bad flag, 1 when the trace cannot be
 * read. A mutable picocli target: one per run, on the main thread.
 */
@Command(
    name = "kvselect-bench replay",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    description = {"Mooncake trace replay against the index (Dynamo's mooncake_bench method)."})
public final class TraceReplay implements Callable<Integer> {

  /** Achieved/offered at or above which a rate counts as kept (the knee criterion). */
  static final double KEPT = 0.95;

  @Option(
      names = "--trace",
      paramLabel = "FILE",
      required = true,
      description = "Mooncake JSONL trace (timestamp ms, hash_ids).")
  Path trace;

  @Option(names = "--workers", paramLabel = "N", description = "Simulated workers (1000).")
  int workers = 1000;

  @Option(
      names = "--duplicate",
      paramLabel = "D",
      description =
          "Copies of each unique worker (Dynamo's -d): N/D unique workers replayed D times (1).")
  int duplicate = 1;

  @Option(
      names = "--rates",
      paramLabel = "R1,R2,...",
      split = ",",
      description = "Offered lookups/s, one replay each (10000,30000,100000,300000).")
  List<Double> rates = List.of(10_000.0, 30_000.0, 100_000.0, 300_000.0);

  @Option(names = "--block-size", paramLabel = "S", description = "Tokens per trace block (512).")
  int blockSize = 512;

  @Option(
      names = "--cache-blocks",
      paramLabel = "C",
      description =
          "LRU capacity of each simulated worker, in blocks (16384, the mocker's default).")
  int cacheBlocks = 16384;

  @Option(
      names = "--threads",
      paramLabel = "T",
      description = "Index shards = replay threads, one writer per shard as the node (2).")
  int threads = 2;

  @Option(
      names = "--apply",
      paramLabel = "MODE",
      description =
          "index: store/remove with precomputed hashes (as Dynamo's bench); "
              + "node: the node's EventApplier on decoded batches, hashing token_ids (index).")
  ReplayWorkload.Apply apply = ReplayWorkload.Apply.INDEX;

  @Option(
      names = "--lookup",
      paramLabel = "API",
      description =
          "scores: findMatches returning OverlapScores, what the node calls (the only "
              + "form; scores).")
  String lookup = "scores";

  @Option(
      names = "--read",
      paramLabel = "WHAT",
      description =
          "none: the replay reads only each result's size; all: after each lookup it "
              + "visits every scored rank's name and device depth (timed with the call in the "
              + "'call+read' columns and included in the response time) (none).")
  String read = "none";

  @Option(names = "--seed", paramLabel = "N", description = "Worker assignment seed (42).")
  long seed = 42;

  @Option(
      names = "--warmup",
      paramLabel = "N",
      description =
          "Unrecorded warm-up passes before the measured ones, each as fast as possible "
              + "against a fresh index, so that the measured passes run compiled code (3; 1 before "
              + "this option existed).")
  int warmup = 3;

  @Option(names = "--no-warmup", description = "Skip the warm-up passes (same as --warmup 0).")
  boolean noWarmup;

  private String invocation = "bin/kvselect-bench replay";
  private PrintStream out = System.out;

  public static void main(String[] args) {
    TraceReplay r = new TraceReplay();
    r.invocation = "bin/kvselect-bench replay " + String.join(" ", args);
    CommandLine cl = new CommandLine(r);
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    System.exit(cl.execute(args));
  }

  /** Prints to {@code stream} instead of stdout (tests). */
  TraceReplay printTo(PrintStream stream, String command) {
    this.out = stream;
    this.invocation = command;
    return this;
  }

  @Override
  public Integer call() throws Exception {
    for (double r : rates) {
      if (!(r > 0)) {
        throw new CommandLine.ParameterException(
            new CommandLine(this), "--rates: every rate must be positive");
      }
    }
    ReplayRun.Lookup form =
        switch (lookup) {
          case "scores" -> ReplayRun.Lookup.SCORES;
          default ->
              throw new CommandLine.ParameterException(
                  new CommandLine(this), "--lookup: scores, not " + lookup);
        };
    if (!read.equals("none") && !read.equals("all")) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--read: none or all, not " + read);
    }
    if (warmup < 0) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--warmup: must be 0 or more, not " + warmup);
    }
    boolean readAll = read.equals("all");
    List<MooncakeTrace.Request> requests = MooncakeTrace.read(trace);
    ReplayWorkload w;
    try {
      w =
          ReplayWorkload.build(
              requests, workers, duplicate, cacheBlocks, blockSize, seed, threads, apply);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
    }
    header(w);
    for (int i = 0; i < warmupPasses(); i++) {
      ReplayRun.run(w, 0, form, readAll);
    }
    List<ReplayRun.Result> results = new ArrayList<>();
    List<Double> sortedRates = new ArrayList<>(rates);
    sortedRates.sort(null);
    for (double r : sortedRates) {
      System.gc();
      results.add(ReplayRun.run(w, r, form, readAll));
    }
    System.gc();
    results.add(ReplayRun.run(w, 0, form, readAll));
    table(w, results);
    return 0;
  }

  private int warmupPasses() {
    return noWarmup ? 0 : warmup;
  }

  private void header(ReplayWorkload w) {
    ReplayWorkload.Counts c = w.counts;
    out.printf("## kvselect-bench replay%n%n");
    out.printf("- command: `%s`%n", invocation);
    out.printf("- commit: %s%n", BenchEnv.gitCommit());
    out.printf(
        "- machine: %d CPUs (nproc), %s; load average %.2f at start%n",
        BenchEnv.cpus(), BenchEnv.cpuModel(), BenchEnv.loadAverage());
    out.printf("- java: %s; max heap %d MiB%n", BenchEnv.javaVersion(), BenchEnv.maxHeapMiB());
    out.printf(
        "- trace: %s, %,d requests over %.1f s of trace time, block size %d%n",
        trace.getFileName(), c.requests(), w.spanMicros / 1e6, w.blockSize);
    out.printf(
        "- workers: %,d (%,d unique x %d), each an LRU cache of %,d blocks; seed %d%n",
        w.workers, w.workers / w.duplicate, w.duplicate, w.cacheBlocks, seed);
    out.printf(
        "- index: ShardedBlockIndex of PrefixChainIndex, %d shards, %d replay threads "
            + "(thread t applies the events of shard t's ranks and runs those workers' lookups); "
            + "events applied by %s%n",
        w.threads,
        w.threads,
        w.apply == ReplayWorkload.Apply.INDEX
            ? "BlockIndex.store/remove with precomputed hashes"
            : "EventApplier (token_ids hashed on apply)");
    out.printf(
        "- passes: %d unrecorded warm-up pass(es) as fast as possible, then one measured "
            + "pass per offered rate and one with everything due at once; every pass replays the whole "
            + "trace against a fresh index (one pass: %,d operations)%n",
        warmupPasses(), c.lookups() + c.events());
    out.printf(
        "- lookups: %s; %s%n",
        "findMatches returning OverlapScores (the node's call)",
        read.equals("all")
            ? "after each lookup the replay visits every scored rank's name and device depth "
                + "(call+read columns; the response time and throughput include it)"
            : "the replay reads only the result's size (call+read = call)");
    out.printf(
        "- operations per replay: %,d lookups (%,d blocks); %,d store events (%,d blocks); "
            + "%,d remove events (%,d blocks); %,d blocks cached at the end%n",
        c.lookups(),
        c.lookupBlocks(),
        c.storeEvents(),
        c.storedBlocks(),
        c.removeEvents(),
        c.removedBlocks(),
        c.cachedAtEnd());
    out.printf(
        "- block-ops = lookup blocks + stored blocks (Dynamo's count); events = stores + "
            + "removes; call = the lookup call alone (findMatches); response = "
            + "from the scheduled instant to the answer "
            + "(includes time the thread was behind); replay CPU = CPU time of the replay threads "
            + "(lookups, events and waiting for the schedule: spinning before a due operation counts); ranks "
            + "scored per lookup = mean size of the lookups' results%n%n");
  }

  private void table(ReplayWorkload w, List<ReplayRun.Result> results) {
    ReplayWorkload.Counts c = w.counts;
    boolean readAll = read.equals("all");
    out.println(
        "| offered lookups/s | achieved lookups/s | achieved/offered | block-ops/s | events/s "
            + "| lookups | call p50 us | call p99 us | call p99.9 us | response p99 us | max behind ms "
            + "| rejected stores | index entries at end | replay CPU s | lookups per CPU-s "
            + "| ranks scored per lookup | call+read p50 us | call+read p99 us |");
    out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    Double knee = null;
    Double firstMissed = null;
    for (ReplayRun.Result r : results) {
      double s = r.seconds();
      boolean max = r.offered() <= 0;
      double ratio = max ? Double.NaN : r.lookupsPerSec() / r.offered();
      if (!max) {
        if (ratio >= KEPT && firstMissed == null) {
          knee = r.offered();
        } else if (ratio < KEPT && firstMissed == null) {
          firstMissed = r.offered();
        }
      }
      out.printf(
          Locale.ROOT,
          "| %s | %,.0f | %s | %,.0f | %,.0f | %,d | %.2f | %.2f | %.2f | %s | %s "
              + "| %d | %,d | %s | %s | %.0f | %s | %s |%n",
          max ? "max (all due at once)" : String.format(Locale.ROOT, "%,.0f", r.offered()),
          r.lookupsPerSec(),
          max ? "n/a" : String.format(Locale.ROOT, "%.2f", ratio),
          (c.lookupBlocks() + c.storedBlocks()) / s,
          c.events() / s,
          r.lookups(),
          us(r.service().getValueAtPercentile(50)),
          us(r.service().getValueAtPercentile(99)),
          us(r.service().getValueAtPercentile(99.9)),
          max
              ? "n/a"
              : String.format(Locale.ROOT, "%.2f", us(r.response().getValueAtPercentile(99))),
          max ? "n/a" : String.format(Locale.ROOT, "%.1f", r.maxBehindNanos() / 1e6),
          r.rejectedStores(),
          r.indexSize(),
          r.cpuSeconds() < 0 ? "n/a" : String.format(Locale.ROOT, "%.3f", r.cpuSeconds()),
          r.cpuSeconds() <= 0
              ? "n/a"
              : String.format(Locale.ROOT, "%,.0f", r.lookups() / r.cpuSeconds()),
          r.scored() / (double) Math.max(1, r.lookups()),
          readAll
              ? String.format(Locale.ROOT, "%.2f", us(r.serviceRead().getValueAtPercentile(50)))
              : "n/a",
          readAll
              ? String.format(Locale.ROOT, "%.2f", us(r.serviceRead().getValueAtPercentile(99)))
              : "n/a");
    }
    out.println();
    if (knee == null) {
      out.printf(
          Locale.ROOT,
          "knee: below the lowest offered rate (%,.0f lookups/s was not kept to %.0f%%)%n",
          firstMissed,
          KEPT * 100);
    } else if (firstMissed == null) {
      out.printf(
          Locale.ROOT,
          "knee: above the highest offered rate (every rate up to %,.0f lookups/s kept to "
              + "%.0f%%; as fast as possible: %,.0f lookups/s)%n",
          knee,
          KEPT * 100,
          results.get(results.size() - 1).lookupsPerSec());
    } else {
      out.printf(
          Locale.ROOT,
          "knee: between %,.0f lookups/s (kept to %.0f%%) and %,.0f lookups/s (not kept)%n",
          knee,
          KEPT * 100,
          firstMissed);
    }
  }

  private static double us(long nanos) {
    return nanos / 1000.0;
  }
}
