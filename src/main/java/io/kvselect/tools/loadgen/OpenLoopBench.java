// Over 400 lines: one open-loop benchmark (both servers started, warmed, driven at each rate, the
// table printed), its steps sharing the servers and the rate schedule.
package io.kvselect.tools.loadgen;

import io.kvselect.tools.Unreachable;
import io.vertx.core.buffer.Buffer;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-openloop}: open-loop latency of kvselect beside a bare Vert.x receiver.
 * Starts the bare receiver ({@link BareReceiver}) and a kvselect node (approximate mode, 64
 * registered workers) as separate JVMs on 127.0.0.1, measures the closed-loop maximum of
 * {@code /select} with {@link OpenLoopGenerator} (unless {@code --max-rate} gives it), then at
 * each {@code --fractions} of it measures, one after another, the bare receiver, {@code /select}
 * and {@code /select_and_reserve} (each answer's reservation deleted when it arrives), and prints a
 * Markdown table with the targets of the performance issue judged below it.
 *
 * <p>A harness, not a test: it asserts nothing; exit 0 after printing, 2 for a bad flag, 1 when
 * the set-up fails. Both servers are stopped by PID before it returns. A mutable picocli target:
 * one per run, on the main thread.
 */
@Command(
    name = "kvselect-openloop",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    description = {
      "Open-loop (coordinated-omission corrected) HTTP latency of kvselect /select and "
          + "/select_and_reserve beside a bare Vert.x receiver, at fractions of the closed-loop maximum."
    })
public final class OpenLoopBench implements Callable<Integer> {

  /** The command line as typed, for the report; set once by {@link #main}. */
  private static volatile String invocation = "kvselect-openloop";

  @Option(
      names = "--seconds",
      paramLabel = "S",
      description = "Measured seconds per rate and server (10).")
  double seconds = 10;

  @Option(
      names = "--warmup",
      paramLabel = "S",
      description = "Seconds of load at the same rate before each " + "measured window (2).")
  double warmup = 2;

  @Option(
      names = "--fractions",
      paramLabel = "F,F,...",
      split = ",",
      description = "Offered rates as fractions of the closed-loop maximum (0.25,0.5,0.75).")
  List<Double> fractions = new ArrayList<>(List.of(0.25, 0.5, 0.75));

  @Option(
      names = "--max-rate",
      paramLabel = "R",
      description = "The closed-loop maximum in req/s; 0 = measure it (0).")
  double maxRate = 0;

  @Option(
      names = "--max-seconds",
      paramLabel = "S",
      description = "Seconds of each closed-loop measurement (3).")
  double maxSeconds = 3;

  @Option(
      names = "--max-warmup",
      paramLabel = "S",
      description =
          "Closed-loop seconds before each closed-loop measurement, also the servers' JIT warm-up (3).")
  double maxWarmup = 3;

  @Option(
      names = "--connections",
      paramLabel = "N",
      description = "Fixed connection pool, pipelining off (64).")
  int connections = 64;

  @Option(
      names = "--event-loops",
      paramLabel = "N",
      description = "Generator event loops (one per core: ${DEFAULT-VALUE}).")
  int eventLoops = Runtime.getRuntime().availableProcessors();

  @Option(names = "--tokens", paramLabel = "N", description = "token_ids per body (4096).")
  int tokens = 4096;

  @Option(
      names = "--bodies",
      paramLabel = "N",
      description =
          "Distinct pre-encoded bodies, sharing their first half; request i sends body i mod N (16).")
  int bodies = 16;

  @Option(
      names = "--workers",
      paramLabel = "N",
      description = "Workers registered on the node, block size 16 (64).")
  int workers = 64;

  @Option(
      names = "--max-lag-ms",
      paramLabel = "MS",
      description =
          "The generator keeps its schedule when 99%% of requests leave at most this late (1).")
  double maxLagMs = 1;

  @Option(names = "--seed", paramLabel = "N", description = "Body seed (1).")
  long seed = 1;

  /** The bodies of every run, encoded once by {@link #run}. */
  private List<Buffer> encoded = List.of();

  /** One measured cell of the table. */
  record Row(
      double fraction, double rate, String server, OpenLoopGenerator.Result result, double load) {}

  public static void main(String[] args) {
    invocation = "bin/kvselect-openloop " + String.join(" ", args);
    System.exit(new CommandLine(new OpenLoopBench()).execute(args));
  }

  @Override
  public Integer call() {
    try {
      validate();
    } catch (IllegalArgumentException e) {
      System.err.println("kvselect-openloop: " + e.getMessage());
      return 2;
    }
    try {
      run(System.out);
      return 0;
    } catch (Exception e) {
      System.err.println("kvselect-openloop: " + Unreachable.message(e));
      return 1;
    }
  }

  void validate() {
    if (!(seconds > 0)
        || !(warmup >= 0)
        || !(maxRate >= 0)
        || !(maxSeconds > 0)
        || !(maxWarmup >= 0)
        || connections < 1
        || eventLoops < 1
        || eventLoops > connections
        || tokens < 1
        || bodies < 1
        || workers < 1
        || !(maxLagMs > 0)
        || fractions.isEmpty()
        || fractions.stream().anyMatch(f -> !(f > 0))) {
      throw new IllegalArgumentException(
          "--seconds, --max-seconds, --max-lag-ms and every --fractions must be > 0; "
              + "--warmup, --max-warmup and --max-rate >= 0; --connections, --tokens, --bodies, --workers >= 1; "
              + "1 <= --event-loops <= --connections");
    }
  }

  private void run(PrintStream out) throws Exception {
    double loadStart = BenchEnv.loadAverage();
    String date =
        ZonedDateTime.now(ZoneOffset.UTC)
            .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));
    encoded = OpenLoopBodies.select(bodies, tokens, seed);
    List<Row> rows = new ArrayList<>();
    OpenLoopGenerator.Result closed = null;
    OpenLoopGenerator.Result bareClosed = null;
    OpenLoopGenerator.Result reserveClosed;
    double max;
    long barePid;
    long nodePid;
    try (ServerProcess bare =
            ServerProcess.start(
                "bare", BareReceiver.class.getName(), List.of("{port}"), Map.of(), "/");
        ServerProcess node =
            ServerProcess.start(
                "kvselect",
                "io.kvselect.server.Launcher",
                List.of("--host", "127.0.0.1", "--port", "{port}"),
                Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"),
                "/health")) {
      barePid = bare.pid();
      nodePid = node.pid();
      System.err.printf(
          "bare receiver pid %d port %d; kvselect pid %d port %d%n",
          bare.pid(), bare.port(), node.pid(), node.port());
      register(node.port());
      if (maxRate > 0) {
        max = maxRate;
      } else {
        bareClosed =
            OpenLoopGenerator.run(
                options(bare.port(), "/select").closed().window(maxWarmup, maxSeconds));
        System.err.printf(
            "closed-loop maximum of the bare receiver: %,.0f req/s%n", bareClosed.achievedRate());
        closed =
            OpenLoopGenerator.run(
                options(node.port(), "/select").closed().window(maxWarmup, maxSeconds));
        max = closed.achievedRate();
        System.err.printf("closed-loop maximum of /select: %,.0f req/s%n", max);
        if (!(max > 0)) {
          throw new IllegalStateException(
              "the closed-loop run completed no request; errors " + closed.stats().errors);
        }
      }
      // also warms the node's reserve and free paths, which the /select runs never reach
      reserveClosed =
          OpenLoopGenerator.run(
              options(node.port(), "/select_and_reserve")
                  .closed()
                  .deleteReservations(true)
                  .window(maxWarmup, maxSeconds));
      System.err.printf(
          "closed-loop rate of /select_and_reserve + DELETE: %,.0f cycles/s%n",
          reserveClosed.achievedRate());
      // the closed-loop runs never reach the generator's own pacing path: warm it on the bare
      // receiver at the first rate, results discarded
      OpenLoopGenerator.run(
          options(bare.port(), "/select")
              .open(Math.max(1, Math.round(fractions.get(0) * max)))
              .window(0, Math.max(1, maxWarmup)));
      for (double f : fractions) {
        double rate = Math.max(1, Math.round(f * max));
        rows.add(measure(f, rate, "bare receiver", bare.port(), "/select", false));
        rows.add(measure(f, rate, "kvselect /select", node.port(), "/select", false));
        rows.add(
            measure(
                f,
                rate,
                "kvselect /select_and_reserve + DELETE",
                node.port(),
                "/select_and_reserve",
                true));
      }
    }
    report(
        out,
        new Setup(
            date,
            loadStart,
            BenchEnv.loadAverage(),
            max,
            closed,
            bareClosed,
            reserveClosed,
            barePid,
            nodePid),
        rows);
  }

  private OpenLoopOptions options(int port, String path) {
    return new OpenLoopOptions()
        .target("127.0.0.1", port, path)
        .bodies(encoded)
        .connections(connections)
        .eventLoops(eventLoops);
  }

  private Row measure(
      double fraction, double rate, String server, int port, String path, boolean reserve)
      throws Exception {
    double load = BenchEnv.loadAverage();
    OpenLoopGenerator.Result r =
        OpenLoopGenerator.run(
            options(port, path).open(rate).window(warmup, seconds).deleteReservations(reserve));
    System.err.printf(
        "%,.0f req/s %s: achieved %,.0f, p50 %.3f ms, p99 %.3f ms, errors %d%n",
        rate, server, r.achievedRate(), r.ms(50), r.ms(99), r.errors());
    return new Row(fraction, rate, server, r, load);
  }

  /** {@code POST /workers} for workers 1..N, block size 16; any answer but 200/201 fails the run. */
  private void register(int port) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    for (int w = 1; w <= workers; w++) {
      String body =
          "{\"worker_id\":" + w + ",\"endpoint\":\"http://w" + w + "\",\"block_size\":16}";
      HttpRequest req =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/workers"))
              .timeout(Duration.ofSeconds(10))
              .header("content-type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(body))
              .build();
      HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
      if (resp.statusCode() != 200 && resp.statusCode() != 201) {
        throw new IllegalStateException(
            "POST /workers answered " + resp.statusCode() + ": " + resp.body());
      }
    }
  }

  /** What heads the table: when, where, and the closed-loop runs ({@code null} with --max-rate). */
  record Setup(
      String date,
      double loadStart,
      double loadEnd,
      double max,
      OpenLoopGenerator.Result closed,
      OpenLoopGenerator.Result bareClosed,
      OpenLoopGenerator.Result reserveClosed,
      long barePid,
      long nodePid) {}

  void report(PrintStream out, Setup setup, List<Row> rows) {
    OpenLoopGenerator.Result closed = setup.closed();
    double max = setup.max();
    out.println("## kvselect-openloop");
    out.println();
    out.printf("- command: `%s`%n", invocation);
    out.printf(
        "- machine: %d CPUs (nproc), %s; java: %s%n",
        BenchEnv.cpus(), BenchEnv.cpuModel(), BenchEnv.javaVersion());
    out.printf(
        "- date: %s; commit: %s; load average %.2f at start, %.2f at end%n",
        setup.date(), BenchEnv.gitCommit(), setup.loadStart(), setup.loadEnd());
    out.printf(
        "- servers: separate JVMs on 127.0.0.1, up for the whole run (pids %d, %d): the bare Vert.x "
            + "receiver (reads each body, answers `{}`) and a kvselect node in approximate mode "
            + "(DYN_ROUTER_USE_KV_EVENTS=false) with %d registered workers, block size 16%n",
        setup.barePid(), setup.nodePid(), workers);
    out.printf(
        "- load: %d pre-encoded `/select` bodies of %d token_ids (first half shared); %d connections "
            + "(HTTP/1.1 keep-alive, pipelining off) over %d generator event loops; the generator's open-loop path "
            + "warmed on the bare receiver for %.1f s (discarded), then per rate and server %.1f s of warm-up at that "
            + "rate and %.1f s measured%n",
        bodies, tokens, connections, eventLoops, Math.max(1, maxWarmup), warmup, seconds);
    if (closed != null) {
      OpenLoopGenerator.Result b = setup.bareClosed();
      out.printf(
          "- closed-loop maximum: **%,.0f req/s** of kvselect `/select` (every connection sends its next "
              + "request on its answer; %.1f s warm-up, %.1f s measured; p50 %.2f ms, p99 %.2f ms, %d errors); the "
              + "bare receiver measured the same way just before: %,.0f req/s (p50 %.2f ms, p99 %.2f ms, %d errors), "
              + "kvselect at %.2fx of it%n",
          max,
          maxWarmup,
          maxSeconds,
          closed.ms(50),
          closed.ms(99),
          closed.errors(),
          b.achievedRate(),
          b.ms(50),
          b.ms(99),
          b.errors(),
          max / b.achievedRate());
    } else {
      out.printf("- closed-loop maximum: %,.0f req/s, given by --max-rate%n", max);
    }
    OpenLoopGenerator.Result rc = setup.reserveClosed();
    out.printf(
        "- closed loop, `/select_and_reserve` + `DELETE` (measured after the above, the same way; it also "
            + "warms the node's reserve and free paths): %,.0f cycles/s, reserve p50 %.2f ms, p99 %.2f ms, %d errors%n",
        rc.achievedRate(), rc.ms(50), rc.ms(99), rc.errors());
    out.println(
        "- latency: from each request's intended send instant (i / rate from the start) to the end of "
            + "its answer, so time spent behind a late generator or queued for a busy connection counts "
            + "(coordinated omission corrected); 2xx answers only; `/select_and_reserve` rows record the reserve "
            + "call's latency, its `DELETE /reservations/{id}` goes out on the next free connection when the "
            + "answer arrives");
    out.printf(
        "- generator behind: how late the generator took requests up, before any wait for a connection "
            + "(p99 / max, ms); on schedule = every request of the window taken up and p99 <= %.1f ms; max queued "
            + "= most requests waiting for a connection on one event loop; generator CPU = CPU time of the "
            + "generator's JVM over the run (warm-up and window) per HTTP call it made (DELETEs included)%n",
        maxLagMs);
    out.println(
        "- note: the generator and both servers share the machine's CPUs, so absolute latencies include "
            + "the generator's own cost");
    out.println();
    out.println(
        "| offered req/s | server | achieved req/s | p50 ms | p99 ms | p99.9 ms | p50 added over bare ms "
            + "| p99 / bare p99 | generator behind ms (p99 / max) | on schedule | generator CPU us/call | max queued "
            + "| errors | load |");
    out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    List<String> verdicts = new ArrayList<>();
    OpenLoopGenerator.Result bare = null;
    for (Row row : rows) {
      OpenLoopGenerator.Result r = row.result();
      boolean isBare = row.server().startsWith("bare");
      if (isBare) {
        bare = r;
      }
      String added = isBare || bare == null ? "" : fmt(r.ms(50) - bare.ms(50));
      String ratio =
          isBare || bare == null ? "" : String.format(Locale.ROOT, "%.2fx", r.ms(99) / bare.ms(99));
      out.printf(
          "| %s (%.0f%%) | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %.0f | %d | %s | %.2f |%n",
          IngestBench.num(row.rate()),
          row.fraction() * 100,
          row.server(),
          IngestBench.num(r.achievedRate()),
          fmt(r.ms(50)),
          fmt(r.ms(99)),
          fmt(r.ms(99.9)),
          added,
          ratio,
          fmt(r.lagMs(99)),
          fmt(r.maxLagMs()),
          r.onSchedule(maxLagMs) ? "yes" : "**no**",
          r.cpuMicrosPerCall(),
          r.stats().maxQueued,
          errors(r),
          row.load());
      if (row.fraction() <= 0.5 + 1e-9 && bare != null) {
        verdicts.addAll(judge(row, bare, isBare));
      }
    }
    out.println();
    out.println(
        "Targets (at every rate up to 50% of the maximum: p99 <= 2x the bare receiver's p99, p50 added "
            + "<= 0.2 ms, the bare receiver's p99 <= 10 ms):");
    out.println();
    verdicts.forEach(v -> out.println("- " + v));
    out.println();
  }

  /**
   * The verdicts of one row up to 50% of the maximum. A row whose run, or whose bare-receiver run
   * at the same rate, did not keep its schedule is reported as inconclusive: its latencies carry
   * the generator's own delays.
   */
  private List<String> judge(Row row, OpenLoopGenerator.Result bare, boolean isBare) {
    OpenLoopGenerator.Result r = row.result();
    String at = IngestBench.num(row.rate()) + " req/s, " + row.server();
    String verdict;
    if (isBare) {
      verdict = "p99 " + fmt(r.ms(99)) + " ms <= 10 ms: " + (r.ms(99) <= 10 ? "met" : "**missed**");
    } else {
      double ratio = r.ms(99) / bare.ms(99);
      double added = r.ms(50) - bare.ms(50);
      verdict =
          "p99 "
              + String.format(Locale.ROOT, "%.2fx", ratio)
              + " of bare: "
              + (ratio <= 2 ? "met" : "**missed**")
              + "; p50 added "
              + fmt(added)
              + " ms: "
              + (added <= 0.2 ? "met" : "**missed**");
    }
    boolean kept = r.onSchedule(maxLagMs) && bare.onSchedule(maxLagMs);
    if (!kept) {
      return List.of(
          at
              + ": inconclusive, the generator fell behind (p99 "
              + fmt(r.lagMs(99))
              + " ms here, "
              + fmt(bare.lagMs(99))
              + " ms on the bare receiver) ["
              + verdict
              + "]");
    }
    return List.of(at + ": " + verdict);
  }

  private static String errors(OpenLoopGenerator.Result r) {
    OpenLoopStats s = r.stats();
    List<String> parts = new ArrayList<>();
    s.errors.forEach((k, n) -> parts.add(n + " " + k));
    if (s.unfinished() > 0) {
      parts.add(s.unfinished() + " unanswered");
    }
    if (s.deleteErrors > 0) {
      parts.add(s.deleteErrors + " failed DELETE");
    }
    return parts.isEmpty() ? "0" : String.join(", ", parts);
  }

  private static String fmt(double ms) {
    return Double.isNaN(ms) ? "-" : String.format(Locale.ROOT, "%.3f", ms);
  }
}
