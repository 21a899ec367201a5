package io.kvselect.tools.loadgen;

import io.kvselect.tools.Unreachable;
import java.io.PrintStream;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-queueload}: the router queue on an overloaded fleet. Starts a kvselect node
 * in this JVM (approximate mode, queueing on) or targets one ({@code --url}), registers simulated
 * workers, sends {@code /select_and_reserve} open loop at {@code --rate} for {@code --duration}
 * seconds, plays each booked request's engine ({@link QueueLoadSender}), samples {@code /loads}
 * every 100 ms and prints a Markdown report: outcomes (200, 429 by {@code limit_kind}, other),
 * latency percentiles, pending counts and the node's {@code kvselect_router_queue_wait} counts.
 *
 * <p>This class is the command: its options, their checks and the result; the run is
 * {@link QueueLoadRun}, the report {@link QueueLoadReport}.
 *
 * <p>A harness, not a test: it asserts nothing; exit 0 after printing, 2 for a bad flag, 1 when
 * the set-up fails. Every thread it starts is stopped before it returns. A mutable picocli target:
 * one per run, on the main thread.
 */
@Command(
    name = "kvselect-queueload",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    description = {
      "Open-loop /select_and_reserve load on simulated workers, with the router queue on."
    })
public final class QueueLoad implements Callable<Integer> {

  /** The command line as typed, for the report; set once by {@link #main}. */
  static volatile String invocation = "kvselect-queueload";

  @Option(
      names = "--url",
      paramLabel = "URL",
      description = "Target this node instead of starting one (its own queue settings apply).")
  String url;

  @Option(
      names = "--threshold",
      paramLabel = "T",
      description = "In-process node: DYN_ROUTER_QUEUE_THRESHOLD (1.0).")
  double threshold = 1.0;

  @Option(
      names = "--queue-timeout-secs",
      paramLabel = "S",
      description = "In-process node: router queue timeout (5).")
  double queueTimeoutSecs = 5;

  @Option(names = "--workers", paramLabel = "N", description = "Simulated workers to register (4).")
  int workers = 4;

  @Option(
      names = "--batch-tokens",
      paramLabel = "N",
      description = "Their max_num_batched_tokens (2048).")
  int batchTokens = 2048;

  @Option(
      names = "--register",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description = "Register the workers (on); --no-register uses the target's own workers.")
  boolean register = true;

  @Option(names = "--rate", paramLabel = "R", description = "Offered requests per second (100).")
  double rate = 100;

  @Option(names = "--duration", paramLabel = "S", description = "Seconds of sending (20).")
  double duration = 20;

  @Option(names = "--isl", paramLabel = "N", description = "Prompt tokens (2048).")
  int isl = 2048;

  @Option(
      names = "--shared-prefix",
      paramLabel = "F",
      description =
          "Fraction of each prompt taken from one of --prefix-groups shared prefixes (0.5).")
  double sharedPrefix = 0.5;

  @Option(
      names = "--prefix-groups",
      paramLabel = "N",
      description = "Distinct shared prefixes (8).")
  int prefixGroups = 8;

  @Option(
      names = "--pool",
      paramLabel = "N",
      description =
          "Pre-encoded bodies; request i sends body i mod N (0 = one per request, at most 8192).")
  int pool = 0;

  @Option(
      names = "--prefill-tokens-per-sec",
      paramLabel = "R",
      description = "Prefill speed of each simulated worker, one request after another (20000).")
  double prefillTokensPerSec = 20_000;

  @Option(
      names = "--decode-ms",
      paramLabel = "MS",
      description = "Decode time before the reservation is freed (200).")
  long decodeMs = 200;

  @Option(
      names = "--event-loops",
      paramLabel = "N",
      description = "Load-generator event loops, one sender each (2).")
  int eventLoops = 2;

  @Option(
      names = "--connections",
      paramLabel = "N",
      description = "HTTP/1.1 connections per sender; a parked request holds one (2048).")
  int connections = 2048;

  @Option(names = "--seed", paramLabel = "N", description = "Workload seed (1).")
  long seed = 1;

  /** Block size of the registered workers. */
  static final int BLOCK_SIZE = 16;

  /** Router-queue wait counts of one outcome over the run, from {@code /metrics}. */
  record QueueWait(long count, double seconds) {}

  /** A finished run. */
  record Result(
      long sent,
      double sendSeconds,
      QueueLoadStats stats,
      long pendingMax,
      double pendingMean,
      int pendingSamples,
      Map<String, QueueWait> queueWaits,
      long unfinished,
      Map<String, Integer> unfinishedBySteps,
      String target,
      long prefixTokens,
      long meanBodyBytes) {}

  public static void main(String[] args) {
    invocation = "bin/kvselect-queueload " + String.join(" ", args);
    System.exit(new CommandLine(new QueueLoad()).execute(args));
  }

  @Override
  public Integer call() {
    try {
      validate();
    } catch (IllegalArgumentException e) {
      System.err.println("kvselect-queueload: " + e.getMessage());
      return 2;
    }
    Result r;
    try {
      r = measure();
    } catch (Exception e) {
      System.err.println("kvselect-queueload: " + Unreachable.message(e));
      return 1;
    }
    report(System.out, r);
    return 0;
  }

  void validate() {
    if (!(rate > 0)
        || !(duration > 0)
        || workers < 1
        || batchTokens < 1
        || isl < 1
        || !(threshold >= 0)
        || !(queueTimeoutSecs > 0)
        || !(sharedPrefix >= 0 && sharedPrefix <= 1)
        || prefixGroups < 1
        || pool < 0
        || !(prefillTokensPerSec > 0)
        || decodeMs < 0
        || eventLoops < 1
        || connections < 1) {
      throw new IllegalArgumentException(
          "--rate, --duration, --queue-timeout-secs and --prefill-tokens-per-sec "
              + "must be > 0; --workers, --batch-tokens, --isl, --prefix-groups, --event-loops and "
              + "--connections >= 1; --pool, --threshold and --decode-ms >= 0; --shared-prefix within [0, 1]");
    }
    if (rate * duration > 10_000_000) {
      throw new IllegalArgumentException("--rate x --duration must be at most 10,000,000 requests");
    }
    if (url != null) {
      URI u = URI.create(url);
      if (u.getHost() == null || u.getPort() < 0) {
        throw new IllegalArgumentException("--url must look like http://HOST:PORT, got " + url);
      }
    }
  }

  /** Bodies to pre-encode: {@code --pool}, or one per request up to 8192. */
  int bodies() {
    return pool > 0 ? pool : (int) Math.min(8192, Math.max(1, Math.round(rate * duration)));
  }

  /** Runs the load and returns what it measured; stops everything it started. */
  Result measure() throws Exception {
    return new QueueLoadRun(this).measure();
  }

  /** Prints the Markdown report of {@code r}. */
  void report(PrintStream out, Result r) {
    QueueLoadReport.print(out, this, r);
  }
}
