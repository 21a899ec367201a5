package io.kvselect.tools.loadgen;

import io.kvselect.server.events.RankStats;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code kvselect-bench throughput}: every publisher sends its pre-encoded batches as fast as the
 * node takes them (at most {@code --window} batches in flight per rank, see {@link Feeder}); after
 * a warm-up, blocks and batches applied by the node's coordinator are counted over
 * {@code --duration} seconds. Repeated {@code --runs} times with a fresh node and fresh publishers;
 * prints each run, the median and the spread (min-max). A mutable picocli target.
 */
@Command(
    name = "throughput",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    description = {"Blocks applied per second with every publisher sending flat out."})
final class ThroughputCommand implements Callable<Integer> {

  /** The thread group of the node's ingest pollers in {@link ThreadCpu}'s breakdown. */
  private static final String POLLERS = "kvselect-zmq-*";

  @Mixin IngestBench.Common common = new IngestBench.Common();

  @Option(names = "--duration", paramLabel = "S", description = "Measured seconds per run (10).")
  int duration = 10;

  @Option(
      names = "--warmup",
      paramLabel = "S",
      description = "Seconds of load before measuring (3).")
  int warmup = 3;

  @Option(names = "--runs", paramLabel = "N", description = "Runs, each with a fresh node (3).")
  int runs = 3;

  @Option(names = "--window", paramLabel = "B", description = "Batches in flight per rank (1000).")
  int window = 1_000;

  @Option(
      names = "--burst",
      paramLabel = "B",
      description = "Batches per rank of the drain phase after each run, 0 = none (5000).")
  int burst = 5_000;

  /** One measured run. */
  record Run(
      double blocksPerSec,
      double storedPerSec,
      double batchesPerSec,
      boolean clean,
      String issues,
      double load,
      Map<String, Double> cpu,
      Drain drain) {}

  /** The drain phase: blocks applied after the publisher threads had handed over every batch. */
  record Drain(long blocks, double seconds, Map<String, Double> cpu) {
    double rate() {
      return blocks / seconds;
    }
  }

  @Override
  public Integer call() throws Exception {
    try {
      common.validate();
      if (duration < 1
          || warmup < 0
          || runs < 1
          || window < 1
          || burst < 0
          || burst + window > 90_000) {
        throw new IllegalArgumentException(
            "--duration, --runs and --window must be positive, --warmup and "
                + "--burst >= 0, --burst + --window <= 90000 (below the ZMQ high-water marks)");
      }
    } catch (IllegalArgumentException e) {
      System.err.println("kvselect-bench: " + e.getMessage());
      return 2;
    }
    PrintStream out = System.out;
    IngestWorkload[] work = common.workloads();
    IngestBench.header(
        out,
        "throughput",
        common,
        "flat out, at most "
            + window
            + " batches in flight per rank; "
            + warmup
            + " s warm-up, then "
            + duration
            + " s measured; "
            + runs
            + " runs, a fresh node and fresh publishers each");
    List<Run> results = new ArrayList<>();
    for (int i = 0; i < runs; i++) {
      Run r = run(work);
      results.add(r);
      System.err.printf("run %d: %s blocks/s%n", i + 1, IngestBench.num(r.blocksPerSec()));
    }
    out.println(
        "| run | applied blocks/s | of which stored blocks/s | batches/s | load avg at start | "
            + "gaps, resets, dropped frames |");
    out.println("|---|---|---|---|---|---|");
    for (int i = 0; i < results.size(); i++) {
      Run r = results.get(i);
      out.printf(
          "| %d | %s | %s | %s | %.2f | %s |%n",
          i + 1,
          IngestBench.num(r.blocksPerSec()),
          IngestBench.num(r.storedPerSec()),
          IngestBench.num(r.batchesPerSec()),
          r.load(),
          r.clean() ? "none" : r.issues());
    }
    double[] b = results.stream().mapToDouble(Run::blocksPerSec).sorted().toArray();
    double[] s = results.stream().mapToDouble(Run::storedPerSec).sorted().toArray();
    double[] n = results.stream().mapToDouble(Run::batchesPerSec).sorted().toArray();
    out.printf(
        "| **median** | **%s** | %s | %s | | |%n",
        IngestBench.num(median(b)), IngestBench.num(median(s)), IngestBench.num(median(n)));
    out.printf(
        "| spread (min-max) | %s - %s | %s - %s | %s - %s | | |%n%n",
        IngestBench.num(b[0]),
        IngestBench.num(b[b.length - 1]),
        IngestBench.num(s[0]),
        IngestBench.num(s[s.length - 1]),
        IngestBench.num(n[0]),
        IngestBench.num(n[n.length - 1]));
    Run mid =
        results.stream()
            .filter(r -> r.blocksPerSec() == median(b))
            .findFirst()
            .orElse(results.get(0));
    IngestBench.printCpu(out, "Median run, measured window", mid.cpu());
    if (burst > 0) {
      printDrains(out, results);
    }
    return 0;
  }

  private Run run(IngestWorkload[] work) throws Exception {
    double load = BenchEnv.loadAverage();
    try (IngestRig rig =
        IngestRig.start(
            common.threads, common.publishers, common.publisherThreads, common.blockSize)) {
      int n = rig.publishers();
      long[] base = new long[n];
      for (int p = 0; p < n; p++) {
        base[p] = rig.published(p);
      }
      Feeder feeder = Feeder.flood(rig, work, window);
      ThreadCpu cpu = new ThreadCpu(rig.publisherZmqThreads());
      feeder.start();
      long a0;
      long a1;
      long b0;
      long b1;
      long[] d0;
      long[] d1;
      long t0;
      long t1;
      Map<String, Double> used;
      try {
        Thread.sleep(warmup * 1000L);
        cpu.begin();
        t0 = System.nanoTime();
        a0 = rig.events().appliedBlocks();
        b0 = rig.events().batches();
        d0 = rig.deliveredSeqs();
        Thread.sleep(duration * 1000L);
        t1 = System.nanoTime();
        a1 = rig.events().appliedBlocks();
        b1 = rig.events().batches();
        d1 = rig.deliveredSeqs();
        used = cpu.end();
      } finally {
        feeder.stop();
      }
      double secs = (t1 - t0) / 1e9;
      long stored = 0;
      for (int p = 0; p < n; p++) {
        stored +=
            work[p].storedBlocks(Math.max(0, d1[p] - base[p] + 1))
                - work[p].storedBlocks(Math.max(0, d0[p] - base[p] + 1));
      }
      Drain drain = burst > 0 ? drain(rig, work, feeder) : null;
      String issues = issues(rig);
      return new Run(
          (a1 - a0) / secs,
          stored / secs,
          (b1 - b0) / secs,
          issues.isEmpty(),
          issues,
          load,
          used,
          drain);
    }
  }

  /**
   * Lets the node catch up, queues {@code burst} batches on every publisher at once, waits until
   * every publisher thread has written them to its PUB socket, and then measures how fast the node
   * applies what is still outstanding, with the publisher threads idle (their ZMQ I/O threads may
   * still be flushing). Main thread; the feeder has stopped.
   */
  private Drain drain(IngestRig rig, IngestWorkload[] work, Feeder feeder)
      throws InterruptedException {
    awaitCaughtUp(rig);
    int n = rig.publishers();
    long blocksBefore = rig.events().appliedBlocks();
    long queued = 0;
    for (int k = 0; k < burst; k++) {
      for (int p = 0; p < n; p++) {
        rig.publish(p, work[p].payload(feeder.sent(p) + k));
        queued += work[p].blocksPerBatch();
      }
    }
    long deadline = System.nanoTime() + 60_000_000_000L;
    boolean written = false;
    while (!written && System.nanoTime() < deadline) {
      written = true;
      for (int p = 0; p < n && written; p++) {
        written = rig.unsent(p) == 0;
      }
      if (!written) {
        Thread.sleep(1);
      }
    }
    ThreadCpu cpu = new ThreadCpu(rig.publisherZmqThreads());
    cpu.begin();
    long t0 = System.nanoTime();
    long a0 = rig.events().appliedBlocks();
    awaitCaughtUp(rig);
    long t1 = System.nanoTime();
    long a1 = rig.events().appliedBlocks();
    Map<String, Double> used = cpu.end();
    if (a1 - blocksBefore != queued) {
      System.err.printf("drain: %d blocks queued, %d applied%n", queued, a1 - blocksBefore);
    }
    return new Drain(a1 - a0, (t1 - t0) / 1e9, used);
  }

  private static void awaitCaughtUp(IngestRig rig) throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!rig.caughtUp()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the node did not catch up within 60 s");
      }
      Thread.sleep(1);
    }
  }

  /** Non-zero gap, reset, dropped-frame, stale and malformed counters over all ranks. */
  static String issues(IngestRig rig) {
    long gaps = 0;
    long resets = 0;
    long dropped = 0;
    long stale = 0;
    long malformed = 0;
    RankStats[] st = rig.rankStats();
    for (int p = 0; p < st.length; p++) {
      gaps += st[p].gaps();
      resets += st[p].resets();
      dropped += st[p].droppedFrames();
      stale += st[p].stale();
      malformed += rig.malformed(p);
    }
    List<String> out = new ArrayList<>();
    if (gaps > 0) {
      out.add(gaps + " gaps");
    }
    if (resets > 0) {
      out.add(resets + " resets");
    }
    if (dropped > 0) {
      out.add(dropped + " dropped frames");
    }
    if (stale > 0) {
      out.add(stale + " stale");
    }
    if (malformed > 0) {
      out.add(malformed + " malformed");
    }
    return String.join(", ", out);
  }

  private void printDrains(PrintStream out, List<Run> results) {
    out.printf(
        "Drain phase after each run: %,d batches per rank queued at once; measured from the moment "
            + "every publisher thread had written its last batch to ZMQ until the node had applied them all "
            + "(publisher threads idle, their ZMQ I/O threads possibly still flushing):%n%n",
        burst);
    out.println(
        "| run | blocks applied in the phase | seconds | applied blocks/s | node pollers' CPU (cores) "
            + "| applied blocks per poller CPU-second |");
    out.println("|---|---|---|---|---|---|");
    double[] rates = new double[results.size()];
    double[] perCore = new double[results.size()];
    for (int i = 0; i < results.size(); i++) {
      Drain d = results.get(i).drain();
      rates[i] = d.rate();
      double cores = d.cpu().getOrDefault(POLLERS, 0.0);
      perCore[i] = cores > 0 ? d.rate() / cores : 0;
      out.printf(
          "| %d | %s | %.3f | %s | %.2f | %s |%n",
          i + 1,
          IngestBench.num(d.blocks()),
          d.seconds(),
          IngestBench.num(d.rate()),
          cores,
          IngestBench.num(perCore[i]));
    }
    Arrays.sort(rates);
    out.printf(
        "| **median** | | | **%s** (min-max %s - %s) | | %s |%n%n",
        IngestBench.num(median(rates)),
        IngestBench.num(rates[0]),
        IngestBench.num(rates[rates.length - 1]),
        IngestBench.num(median(perCore)));
    out.println(
        "The last column divides the phase's rate by the CPU its `kvselect-zmq-*` threads (read, decode, "
            + "apply) got: on a shared machine it is the steadier measure of the ingest path's cost.");
    out.println();
    Run mid =
        results.stream()
            .filter(r -> r.drain().rate() == median(rates))
            .findFirst()
            .orElse(results.get(0));
    IngestBench.printCpu(out, "Median drain phase", mid.drain().cpu());
  }

  static double median(double[] sorted) {
    double[] s = sorted.clone();
    Arrays.sort(s);
    int m = s.length / 2;
    return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  }
}
