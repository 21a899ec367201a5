package io.kvselect.tools.chaos;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One clustered kvselect node the harness runs: a JVM started from the fat jar on 127.0.0.1 with
 * the HTTP, Hazelcast member and event-bus ports the harness picked, so a restart reuses them and
 * a partition can name them. Signals go to its PID only. Its output is appended to one log file
 * across restarts. The process field is replaced by {@link #start}; the harness's main thread
 * starts, signals and stops it, and client threads read {@link #state} to pick a node to call.
 */
final class ChaosNode {

  /** Whether clients may call the node. */
  enum State {
    STARTING,
    UP,
    KILLED,
    STOPPED,
    PARTITIONED,
    GONE
  }

  final int index;
  final int httpPort;
  final int clusterPort;
  final int busPort;
  final Path log;
  private final List<String> command;
  private final Map<String, String> env;
  private volatile Process process;
  volatile State state = State.STARTING;

  ChaosNode(
      int index,
      int httpPort,
      int clusterPort,
      int busPort,
      Path log,
      List<String> command,
      Map<String, String> env) {
    this.index = index;
    this.httpPort = httpPort;
    this.clusterPort = clusterPort;
    this.busPort = busPort;
    this.log = log;
    this.command = List.copyOf(command);
    this.env = Map.copyOf(env);
  }

  /** {@code node1 (http 40123, member 40124, bus 40125)}. */
  String name() {
    return "node" + index;
  }

  String describe() {
    return name() + " (http " + httpPort + ", member " + clusterPort + ", bus " + busPort + ")";
  }

  boolean callable() {
    State s = state;
    return s == State.UP || s == State.PARTITIONED;
  }

  /** Starts a new process with the same command and ports; its output is appended to the log. */
  void start() throws IOException {
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().keySet().removeIf(k -> k.startsWith("DYN_") || k.startsWith("KVSELECT_"));
    pb.environment().putAll(env);
    state = State.STARTING;
    process = pb.start();
  }

  long pid() {
    Process p = process;
    return p == null ? -1 : p.pid();
  }

  boolean alive() {
    Process p = process;
    return p != null && p.isAlive();
  }

  /** SIGKILL to the PID, then waits (at most 30 s) for the exit. */
  void sigkill() throws InterruptedException {
    state = State.KILLED;
    Process p = process;
    if (p != null) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** SIGSTOP to the PID. */
  void sigstop() throws IOException, InterruptedException {
    state = State.STOPPED;
    signal("STOP");
  }

  /** SIGCONT to the PID. */
  void sigcont() throws IOException, InterruptedException {
    signal("CONT");
  }

  /** SIGCONT (a stopped JVM cannot act on SIGTERM), SIGTERM, and SIGKILL after {@code graceSecs}. */
  void stop(long graceSecs) throws InterruptedException {
    state = State.GONE;
    Process p = process;
    if (p == null || !p.isAlive()) {
      return;
    }
    try {
      signal("CONT");
    } catch (IOException e) {
      // gone meanwhile
    }
    p.destroy();
    if (!p.waitFor(graceSecs, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  /** For a shutdown hook: SIGCONT and SIGKILL, without waiting. */
  void killNow() {
    Process p = process;
    if (p != null && p.isAlive()) {
      try {
        new ProcessBuilder("kill", "-CONT", Long.toString(p.pid())).start();
      } catch (IOException e) {
        // SIGKILL ends a stopped process too
      }
      p.destroyForcibly();
    }
  }

  private void signal(String name) throws IOException, InterruptedException {
    long pid = pid();
    if (pid < 0) {
      return;
    }
    Process kill =
        new ProcessBuilder("kill", "-" + name, Long.toString(pid))
            .redirectErrorStream(true)
            .start();
    if (!kill.waitFor(10, TimeUnit.SECONDS)) {
      kill.destroyForcibly();
      throw new IOException("kill -" + name + " " + pid + " did not return in 10 s");
    }
    if (kill.exitValue() != 0) {
      throw new IOException(
          "kill -"
              + name
              + " "
              + pid
              + " failed: "
              + new String(kill.getInputStream().readAllBytes()).strip());
    }
  }

  /** The last {@code lines} of the log. */
  String tail(int lines) {
    try {
      List<String> all = Files.readAllLines(log);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException | RuntimeException e) {
      return "(log unreadable: " + e.getMessage() + ")";
    }
  }

  /** The command line of a node: {@code java [opts] -jar JAR --cluster ...}. */
  static List<String> command(
      String java,
      List<String> jvmOpts,
      Path jar,
      String clusterName,
      String members,
      int httpPort,
      int clusterPort,
      int busPort,
      int reconcileSecs) {
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.addAll(jvmOpts);
    cmd.addAll(
        List.of(
            "-jar",
            jar.toString(),
            "--cluster",
            "--cluster-name",
            clusterName,
            "--cluster-members",
            members,
            "--cluster-host",
            "127.0.0.1",
            "--cluster-port",
            Integer.toString(clusterPort),
            "--cluster-bus-port",
            Integer.toString(busPort),
            "--cluster-reconcile-secs",
            Integer.toString(reconcileSecs),
            "--host",
            "127.0.0.1",
            "--port",
            Integer.toString(httpPort),
            "--session-affinity-ttl-secs",
            "600"));
    return cmd;
  }
}
