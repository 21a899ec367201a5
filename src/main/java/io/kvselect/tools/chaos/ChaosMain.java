// Over 400 lines: one chaos scenario end to end (start the processes, register, drive, inject each
// fault, compare every node, report), its steps sharing the processes and the recorder.
package io.kvselect.tools.chaos;

import io.kvselect.tools.loadgen.BenchEnv;
import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-chaos}: starts {@code --nodes} clustered kvselect processes from the fat jar
 * on 127.0.0.1, registers {@code --workers} workers of two data-parallel ranks once (approximate
 * mode), drives session-bound lifecycles from {@code --clients} threads and runs the fault phases
 * one after another (baseline, SIGKILL + restart, SIGSTOP, loopback partition, optionally a long
 * partition), printing a Markdown table per phase and a summary. A harness, not a test: it asserts
 * nothing; exit 0 after printing, 2 for a bad flag, 1 when the set-up fails. Every process it
 * started is stopped by PID at the end, on failure and from a shutdown hook, and every iptables
 * rule it added is deleted. A mutable picocli target: one per run, on the main thread.
 */
@Command(
    name = "kvselect-chaos",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    description = {
      "Fault phases (SIGKILL + restart, SIGSTOP, loopback partition) on a local kvselect cluster"
          + " under session-bound lifecycle load; prints a Markdown table per phase."
    })
public final class ChaosMain implements Callable<Integer> {

  /** The command line as typed, for the report; set once by {@link #main}. */
  private static volatile String invocation = "kvselect-chaos";

  @Option(
      names = "--short",
      description =
          "A run of about two minutes: warm-up 5 s, baseline 10 s, SIGKILL +"
              + " restart, a 6 s SIGSTOP, no partition; overrides the phase lengths.")
  boolean shortRun;

  @Option(names = "--nodes", paramLabel = "N", description = "Clustered nodes, separate JVMs (3).")
  int nodes = 3;

  @Option(
      names = "--workers",
      paramLabel = "M",
      description = "Workers registered, 2 data-parallel ranks each (4).")
  int workers = 4;

  @Option(
      names = "--clients",
      paramLabel = "C",
      description = "Client threads, one lifecycle at a time each (8).")
  int clients = 8;

  @Option(
      names = "--sessions",
      paramLabel = "N",
      description = "Session pool; each turn's prompt grows (200).")
  int sessions = 200;

  @Option(
      names = "--timeout-ms",
      paramLabel = "MS",
      description = "Client timeout of every call (2000).")
  long timeoutMs = 2000;

  @Option(names = "--baseline-secs", paramLabel = "S", description = "Baseline phase (30).")
  double baselineSecs = 30;

  @Option(
      names = "--warmup-secs",
      paramLabel = "S",
      description = "Unmeasured load before the baseline (15).")
  double warmupSecs = 15;

  @Option(names = "--lead-secs", paramLabel = "S", description = "Load before each fault (5).")
  double leadSecs = 5;

  @Option(
      names = "--recovery-secs",
      paramLabel = "S",
      description = "Load after each fault is undone (15).")
  double recoverySecs = 15;

  @Option(names = "--kill-down-secs", paramLabel = "S", description = "SIGKILL to restart (5).")
  double killDownSecs = 5;

  @Option(names = "--pause-secs", paramLabel = "S", description = "SIGSTOP to SIGCONT (15).")
  double pauseSecs = 15;

  @Option(names = "--partition-secs", paramLabel = "S", description = "Loopback partition (20).")
  double partitionSecs = 20;

  @Option(names = "--long-partition", description = "Also run a long partition phase (off).")
  boolean longPartition;

  @Option(names = "--long-partition-secs", paramLabel = "S", description = "Its length (90).")
  double longPartitionSecs = 90;

  @Option(names = "--no-kill", description = "Skip the SIGKILL + restart phase.")
  boolean noKill;

  @Option(names = "--no-pause", description = "Skip the SIGSTOP phase.")
  boolean noPause;

  @Option(
      names = "--no-partition",
      description = "Skip the partition phase (not --long-partition).")
  boolean noPartition;

  @Option(
      names = "--victim",
      paramLabel = "I",
      description = "Index of the node faulted (the last, N-1).")
  Integer victim;

  @Option(
      names = "--reconcile-secs",
      paramLabel = "S",
      description = "The nodes' --cluster-reconcile-secs (5).")
  int reconcileSecs = 5;

  @Option(
      names = "--drain-secs",
      paramLabel = "S",
      description = "Bound of the wait after a phase for every /loads to reach 0 (60).")
  int drainSecs = 60;

  @Option(
      names = "--start-timeout-secs",
      paramLabel = "S",
      description = "Bound of a node's start (180).")
  int startTimeoutSecs = 180;

  @Option(
      names = "--node-java-opts",
      paramLabel = "OPTS",
      description = "JVM options of each node (-Xmx384m -Dhazelcast.wait.seconds.before.join=0).")
  String nodeJavaOpts = "-Xmx384m -Dhazelcast.wait.seconds.before.join=0";

  @Option(
      names = "--jar",
      paramLabel = "JAR",
      description = "The fat jar the nodes run (the one this runs from).")
  Path jar;

  @Option(
      names = "--logs",
      paramLabel = "DIR",
      description = "Where the nodes' logs go (a new temporary directory).")
  Path logs;

  @Option(names = "--seed", paramLabel = "N", description = "Client RNG seed (1).")
  long seed = 1;

  public static void main(String[] args) {
    invocation = "bin/kvselect-chaos " + String.join(" ", args);
    System.exit(new CommandLine(new ChaosMain()).execute(args));
  }

  /** The phases to run, in order. */
  List<PhaseRunner.Phase> phases() {
    List<PhaseRunner.Phase> out = new ArrayList<>();
    out.add(new PhaseRunner.Phase("baseline", PhaseRunner.Fault.NONE, 0));
    if (!noKill) {
      out.add(
          new PhaseRunner.Phase("sigkill-restart", PhaseRunner.Fault.KILL_RESTART, killDownSecs));
    }
    if (!noPause) {
      out.add(new PhaseRunner.Phase("sigstop", PhaseRunner.Fault.PAUSE, pauseSecs));
    }
    if (!noPartition && !shortRun) {
      out.add(new PhaseRunner.Phase("partition", PhaseRunner.Fault.PARTITION, partitionSecs));
    }
    if (longPartition && !shortRun) {
      out.add(
          new PhaseRunner.Phase("long-partition", PhaseRunner.Fault.PARTITION, longPartitionSecs));
    }
    return out;
  }

  /** Applies {@code --short} and checks the flags; throws naming the flag. */
  ChaosOptions resolve() {
    if (shortRun) {
      warmupSecs = 5;
      baselineSecs = 10;
      leadSecs = 3;
      killDownSecs = 2;
      pauseSecs = 6;
      recoverySecs = 5;
    }
    int v = victim == null ? nodes - 1 : victim;
    if (nodes < 2 || nodes > 9) {
      throw new IllegalArgumentException("--nodes must be within [2, 9]");
    }
    if (v < 0 || v >= nodes) {
      throw new IllegalArgumentException("--victim must be within [0, " + (nodes - 1) + "]");
    }
    if (workers < 1
        || clients < 1
        || sessions < clients
        || timeoutMs < 1
        || reconcileSecs < 1
        || drainSecs < 1
        || startTimeoutSecs < 1) {
      throw new IllegalArgumentException(
          "--workers, --clients, --timeout-ms, --reconcile-secs, --drain-secs and "
              + "--start-timeout-secs must be >= 1; --sessions >= --clients");
    }
    for (double d :
        new double[] {
          warmupSecs,
          baselineSecs,
          leadSecs,
          recoverySecs,
          killDownSecs,
          pauseSecs,
          partitionSecs,
          longPartitionSecs
        }) {
      if (!(d >= 0 && d <= 3600)) {
        throw new IllegalArgumentException("every --*-secs phase length must be within [0, 3600]");
      }
    }
    return new ChaosOptions(
        clients, v, baselineSecs, leadSecs, recoverySecs, drainSecs, startTimeoutSecs);
  }

  @Override
  public Integer call() {
    ChaosOptions o;
    try {
      o = resolve();
      if (jar == null) {
        jar = ownJar();
      }
    } catch (IllegalArgumentException e) {
      System.err.println("kvselect-chaos: " + e.getMessage());
      return 2;
    }
    try {
      run(System.out, o);
      return 0;
    } catch (Exception e) {
      System.err.println("kvselect-chaos: " + e.getMessage());
      return 1;
    }
  }

  /** Starts the fleet, runs every phase, prints the report; stops everything it started. */
  void run(PrintStream out, ChaosOptions o) throws IOException, InterruptedException {
    String runId = UUID.randomUUID().toString().substring(0, 8);
    String clusterName = "kvs-chaos-" + UUID.randomUUID();
    Path logDir =
        logs == null ? Files.createTempDirectory("kvselect-chaos-") : Files.createDirectories(logs);
    HttpClient http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofMillis(timeoutMs))
            .build();
    ChaosFleet fleet = new ChaosFleet(createNodes(clusterName, logDir), http);
    LoopbackPartition partition = new LoopbackPartition();
    Thread hook =
        new Thread(
            () -> {
              partition.heal();
              fleet.nodes.forEach(ChaosNode::killNow);
            },
            "kvselect-chaos-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      header(out, o, fleet, clusterName, logDir);
      startFleet(fleet, o);
      LifecycleLoad load =
          new LifecycleLoad(fleet, Duration.ofMillis(timeoutMs), sessions, runId, seed);
      String noPartition = null;
      if (phases().stream().anyMatch(p -> p.fault() == PhaseRunner.Fault.PARTITION)) {
        noPartition = LoopbackPartition.unavailable();
        if (noPartition != null) {
          System.err.println("kvselect-chaos: the partition phases are skipped: " + noPartition);
        }
      }
      PhaseRunner runner = new PhaseRunner(fleet, load, partition, o, noPartition);
      warmUp(fleet, load);
      List<PhaseResult> results = new ArrayList<>();
      int number = 1;
      for (PhaseRunner.Phase p : phases()) {
        PhaseResult r = runner.run(p);
        results.add(r);
        Report.phase(out, number++, r);
        out.flush();
      }
      Report.summary(out, results);
      out.flush();
    } finally {
      List<String> left = partition.heal();
      if (!left.isEmpty()) {
        System.err.println(
            "kvselect-chaos: iptables rules that could not be deleted: " + String.join("; ", left));
      }
      fleet.close();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException exiting) {
        // the hook runs anyway
      }
      System.err.println("kvselect-chaos: every node stopped; logs in " + logDir);
    }
  }

  private List<ChaosNode> createNodes(String clusterName, Path logDir) throws IOException {
    int[] ports = ChaosFleet.freePorts(3 * nodes);
    StringBuilder members = new StringBuilder();
    for (int i = 0; i < nodes; i++) {
      members.append(i == 0 ? "" : ",").append("127.0.0.1:").append(ports[3 * i + 1]);
    }
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> opts = new ArrayList<>(List.of(nodeJavaOpts.trim().split("\\s+")));
    opts.removeIf(String::isEmpty);
    String logback = System.getProperty("logback.configurationFile");
    if (logback != null) {
      opts.add("-Dlogback.configurationFile=" + logback);
    }
    List<ChaosNode> out = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      int httpPort = ports[3 * i];
      int clusterPort = ports[3 * i + 1];
      int busPort = ports[3 * i + 2];
      out.add(
          new ChaosNode(
              i,
              httpPort,
              clusterPort,
              busPort,
              logDir.resolve("node" + i + ".log"),
              ChaosNode.command(
                  java,
                  opts,
                  jar,
                  clusterName,
                  members.toString(),
                  httpPort,
                  clusterPort,
                  busPort,
                  reconcileSecs),
              Map.of("DYN_ROUTER_USE_KV_EVENTS", "false")));
    }
    return out;
  }

  private void startFleet(ChaosFleet fleet, ChaosOptions o)
      throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    for (ChaosNode n : fleet.nodes) {
      n.start();
    }
    Duration bound = Duration.ofSeconds(o.startTimeoutSecs());
    for (ChaosNode n : fleet.nodes) {
      fleet.awaitMembers(n, nodes, bound);
    }
    ChaosNode first = fleet.nodes.get(0);
    for (int w = 1; w <= workers; w++) {
      String spec =
          "{\"worker_id\":"
              + w
              + ",\"endpoint\":\"http://chaos-worker-"
              + w
              + ":8000\",\"block_size\":16,"
              + "\"data_parallel_size\":2}";
      ChaosFleet.Answer a = fleet.call(first, "POST", "/workers", spec, Duration.ofSeconds(10));
      if (a.status() / 100 != 2) {
        throw new IOException(
            "POST /workers on " + first.describe() + " answered " + a.status() + ": " + a.body());
      }
    }
    for (ChaosNode n : fleet.nodes) {
      fleet.awaitReady(n, bound);
      n.state = ChaosNode.State.UP;
    }
    System.err.printf(
        Locale.ROOT,
        "kvselect-chaos: %d nodes joined and ready after %.1f s%n",
        nodes,
        (System.nanoTime() - t0) / 1e9);
  }

  /** {@code --warmup-secs} of load, measured nowhere, then its bookings drained (JIT, connections, sessions). */
  private void warmUp(ChaosFleet fleet, LifecycleLoad load) throws InterruptedException {
    if (warmupSecs <= 0) {
      return;
    }
    System.err.printf("kvselect-chaos: warming up for %s s%n", warmupSecs);
    PhaseStats ignored = new PhaseStats();
    LifecycleLoad.Running running = load.start(ignored, clients);
    try {
      ChaosFleet.sleepSecs(warmupSecs);
    } finally {
      running.stop();
    }
    load.settle(ignored);
    ChaosFleet.within(
        Duration.ofSeconds(drainSecs),
        Duration.ofMillis(250),
        () -> fleet.nodes.stream().allMatch(n -> fleet.activeRequests(n) == 0));
  }

  private void header(
      PrintStream out, ChaosOptions o, ChaosFleet fleet, String clusterName, Path logDir) {
    out.println("## kvselect-chaos");
    out.println();
    out.printf("- command: `%s`%n", invocation);
    out.printf("- date: %s%n", Instant.now().truncatedTo(ChronoUnit.SECONDS));
    out.printf("- commit: %s%n", BenchEnv.gitCommit());
    out.printf(
        Locale.ROOT,
        "- machine: %d CPUs (nproc), %s, %s memory; load average %.2f at the start%n",
        BenchEnv.cpus(),
        BenchEnv.cpuModel(),
        memory(),
        BenchEnv.loadAverage());
    out.printf("- java: %s%n", BenchEnv.javaVersion());
    StringBuilder ports = new StringBuilder();
    for (ChaosNode n : fleet.nodes) {
      ports.append(ports.isEmpty() ? "" : ", ").append(n.describe());
    }
    out.printf(
        "- cluster: %d kvselect processes on 127.0.0.1 (%s), cluster name %s, "
            + "--session-affinity-ttl-secs 600, --cluster-reconcile-secs %d, node JVM options `%s`; faults hit node%d%n",
        nodes, ports, clusterName, reconcileSecs, nodeJavaOpts, o.victim());
    out.printf(
        "- fleet: %d workers x 2 data-parallel ranks (block size 16), registered once through node0's "
            + "POST /workers; approximate mode (DYN_ROUTER_USE_KV_EVENTS=false), no engine behind them%n",
        workers);
    out.printf(
        "- load: %d client threads, closed loop, each a full lifecycle at a time (select_and_reserve with a "
            + "session_id and selection_id, prefill_complete, DELETE, each to a random node not killed or stopped); "
            + "%d sessions whose prompts grow from 128 tokens by 64 a turn up to 2048; client timeout %d ms per call; "
            + "%s s of unmeasured warm-up load before the baseline%n",
        clients, sessions, timeoutMs, warmupSecs);
    out.println(
        "- latency: session-bound select_and_reserve as the client saw it (HdrHistogram); a call that timed"
            + " out counts at its elapsed time, so tails are lower bounds. A binding move is a change of worker between"
            + " two consecutive answered turns of one session. When a phase's load stops, the"
            + " selections whose select_and_reserve or DELETEs got no answer are freed (DELETE, 10 s timeout); leaked"
            + " bookings are the active requests any node's /loads still counts after that, once the drain bound"
            + " (--drain-secs) passed.");
    out.printf("- node logs: %s%n%n", logDir);
    out.flush();
  }

  private static String memory() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          long kib = Long.parseLong(line.replaceAll("[^0-9]", ""));
          return String.format(Locale.ROOT, "%.1f GiB", kib / 1048576.0);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return "unknown";
  }

  private static Path ownJar() {
    try {
      var src = ChaosMain.class.getProtectionDomain().getCodeSource();
      if (src != null) {
        Path p = Path.of(src.getLocation().toURI());
        if (p.toString().endsWith(".jar")) {
          return p;
        }
      }
    } catch (java.net.URISyntaxException | SecurityException e) {
      // fall through
    }
    throw new IllegalArgumentException(
        "not run from the fat jar: give --jar target/kvselect-*-fat.jar");
  }
}
