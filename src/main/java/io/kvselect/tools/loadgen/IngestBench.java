package io.kvselect.tools.loadgen;

import io.kvselect.tools.mock.WireFormat;
import java.io.PrintStream;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-bench}: the KV-event ingestion benchmark. Starts a kvselect node in this JVM
 * and 64 (by default) mock vLLM publishers on 127.0.0.1, and prints a Markdown table on stdout
 * (logs go to stderr):
 *
 * <ul>
 *   <li>{@code throughput}: blocks applied per second when every publisher sends as fast as the
 *       node takes the batches ({@link ThroughputCommand});
 *   <li>{@code sustained}: a fixed offered rate for a while, then a check that nothing was lost
 *       ({@link SustainedCommand}).
 * </ul>
 *
 * <p>It is a harness, not a test: it asserts nothing and exits 0 after printing, 2 for a bad
 * flag, 1 when the set-up fails. A mutable picocli target: one per run, on the main thread.
 */
@Command(
    name = "kvselect-bench",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    description = {"KV-event ingestion benchmark (in-process node, mock vLLM publishers)."},
    subcommands = {ThroughputCommand.class, SustainedCommand.class})
public final class IngestBench implements Runnable {

  /** The command line as typed, for the report; set once by {@link #main}. */
  private static volatile String invocation = "kvselect-bench";

  /** Options shared by both modes. A mutable picocli mixin, confined to the main thread. */
  static final class Common {
    @Option(
        names = "--threads",
        paramLabel = "N",
        description = "Node --threads: ingest poller threads and index shards (2).")
    int threads = 2;

    @Option(
        names = "--publishers",
        paramLabel = "N",
        description = "Mock publishers, each its own single-rank worker (64).")
    int publishers = 64;

    @Option(names = "--block-size", paramLabel = "S", description = "Tokens per block (16).")
    int blockSize = 16;

    @Option(names = "--blocks-per-batch", paramLabel = "B", description = "Blocks per batch (16).")
    int blocksPerBatch = 16;

    @Option(
        names = "--events-per-batch",
        paramLabel = "E",
        description =
            "Events per message (one message per scheduler step, as vLLM); E divides K (1).")
    int eventsPerBatch = 1;

    @Option(
        names = "--chain-batches",
        paramLabel = "K",
        description = "Store events per chain: each rank holds about K x B blocks (64).")
    int chainBatches = 64;

    @Option(
        names = "--publisher-threads",
        paramLabel = "T",
        description =
            "Socket threads hosting the publishers (each with its own ZMQ context and one ZMQ "
                + "I/O thread); publisher p on thread p mod T; T >= publishers = one each (4).")
    int publisherThreads = 4;

    @Option(
        names = "--wire",
        paramLabel = "FORM",
        description = "map (vLLM 0.26+) or array (vLLM <= 0.23) (map).")
    WireFormat wire = WireFormat.MAP;

    @Option(names = "--seed", paramLabel = "N", description = "Workload seed (1).")
    long seed = 1;

    void validate() {
      if (threads < 1
          || publishers < 1
          || blockSize < 1
          || blocksPerBatch < 1
          || chainBatches < 1
          || eventsPerBatch < 1
          || publisherThreads < 1) {
        throw new IllegalArgumentException(
            "--threads, --publishers, --publisher-threads, --block-size, "
                + "--blocks-per-batch, --events-per-batch and --chain-batches must be positive");
      }
      if (chainBatches % eventsPerBatch != 0) {
        throw new IllegalArgumentException(
            "--events-per-batch "
                + eventsPerBatch
                + " must divide --chain-batches "
                + chainBatches);
      }
    }

    /** Encodes every publisher's cycle (before any clock runs). */
    IngestWorkload[] workloads() {
      IngestWorkload[] w = new IngestWorkload[publishers];
      for (int p = 0; p < publishers; p++) {
        w[p] =
            IngestWorkload.cycle(
                seed, p, 0, chainBatches, blocksPerBatch, eventsPerBatch, blockSize, wire);
      }
      return w;
    }
  }

  public static void main(String[] args) {
    invocation = "bin/kvselect-bench " + String.join(" ", args);
    CommandLine cl = new CommandLine(new IngestBench());
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    System.exit(cl.execute(args));
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        new CommandLine(this), "choose a mode: throughput or sustained");
  }

  /** Prints the set-up block that heads every table. */
  static void header(PrintStream out, String mode, Common c, String load) {
    out.printf("## kvselect-bench %s%n%n", mode);
    out.printf("- command: `%s`%n", invocation);
    out.printf("- commit: %s%n", BenchEnv.gitCommit());
    out.printf(
        "- machine: %d CPUs (nproc), %s; load average %.2f at start%n",
        BenchEnv.cpus(), BenchEnv.cpuModel(), BenchEnv.loadAverage());
    out.printf("- java: %s; max heap %d MiB%n", BenchEnv.javaVersion(), BenchEnv.maxHeapMiB());
    out.printf(
        "- node: in-process, --threads %d (%d ingest poller threads, 1 ZMQ I/O thread, "
            + "%s), HTTP on an ephemeral loopback port%n",
        c.threads, c.threads, c.threads > 1 ? c.threads + " index shards" : "one unsharded index");
    int hosts = Math.min(c.publisherThreads, c.publishers);
    out.printf(
        "- publishers: %d mock vLLM publishers (one PUB + one replay ROUTER each) in this JVM, their "
            + "sockets on %d socket thread%s (`kvselect-bench-pub-*`, %s), each thread with its own ZMQ context "
            + "and 1 ZMQ I/O thread; each publisher registered as a single-rank worker, block size %d, %s wire "
            + "form%n",
        c.publishers,
        hosts,
        hosts == 1 ? "" : "s",
        hosts == c.publishers ? "one per publisher" : "publisher p on thread p mod " + hosts,
        c.blockSize,
        c.wire.name().toLowerCase(Locale.ROOT));
    out.printf(
        "- workload: pre-encoded, seeded; per publisher a steady cache of about %d blocks (two "
            + "chains of %d take turns: store the next %d-block event of one chain, evict the deepest %d "
            + "blocks of the other); every event is one BlockStored (%d tokens) or one BlockRemoved of %d "
            + "blocks; **one message (batch) carries %d event%s = %d blocks**; a block = one hash in a store "
            + "or a removal (the node's applied-blocks counter)%n",
        c.chainBatches * c.blocksPerBatch,
        c.chainBatches * c.blocksPerBatch,
        c.blocksPerBatch,
        c.blocksPerBatch,
        c.blocksPerBatch * c.blockSize,
        c.blocksPerBatch,
        c.eventsPerBatch,
        c.eventsPerBatch == 1 ? "" : "s",
        c.eventsPerBatch * c.blocksPerBatch);
    out.printf("- load: %s%n", load);
    out.printf(
        "- note: the publishers, their ZMQ I/O threads and the feeder run in the same JVM and "
            + "share the %d CPUs with the node, so the node gets less than the whole machine%n%n",
        BenchEnv.cpus());
  }

  /** Prints the CPU-per-thread-group breakdown of one window (groups above 1% of a core). */
  static void printCpu(PrintStream out, String title, Map<String, Double> cpu) {
    out.printf("%s (CPU cores used per thread group, wall-clock average):%n%n", title);
    out.println("| thread group | cores |");
    out.println("|---|---|");
    double total = 0;
    for (Map.Entry<String, Double> e : cpu.entrySet()) {
      total += e.getValue();
    }
    cpu.entrySet().stream()
        .filter(e -> e.getValue() >= 0.01)
        .sorted((a, b) -> Double.compare(b.getValue(), a.getValue()))
        .forEach(e -> out.printf("| `%s` | %.2f |%n", e.getKey(), e.getValue()));
    out.printf("| all threads | %.2f |%n%n", total);
  }

  static String num(double v) {
    return String.format(Locale.ROOT, "%,.0f", v);
  }
}
