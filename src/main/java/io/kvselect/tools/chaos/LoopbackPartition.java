package io.kvselect.tools.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Cuts one member off the others on loopback with {@code iptables} DROP rules in the INPUT chain
 * of {@code lo} that match only ports of the harness's own processes: the member's Hazelcast
 * member port and event-bus port (as source or destination: every connection to it), plus the
 * local ports of the connections the member itself opened to the others' member and bus ports,
 * which leave from ephemeral ports ({@link #refresh} finds them from {@code /proc} and is called
 * again while the cut lasts), and every new connection (SYN) to the peers' member and bus ports
 * while the cut lasts, so a reconnect cannot carry a heartbeat before the next refresh. Every rule added is remembered and
 * {@link #heal} deletes exactly those. Used by the main thread and by a shutdown hook: synchronized.
 */
final class LoopbackPartition {

  private static final long COMMAND_TIMEOUT_S = 10;

  private final List<List<String>> added = new ArrayList<>();
  private final Set<Integer> cutPorts = new HashSet<>();

  /** Why partitions cannot run here ({@code iptables} missing or not permitted), or null when they can. */
  static String unavailable() {
    try {
      Result r = run(List.of("iptables", "-w", "-S", "INPUT"));
      if (r.exit() != 0) {
        return "iptables is not permitted here (`iptables -S INPUT` exited "
            + r.exit()
            + ": "
            + r.output().strip()
            + ")";
      }
      return null;
    } catch (IOException e) {
      return "iptables is not installed (" + e.getMessage() + ")";
    }
  }

  /** Cuts {@code victim} off the nodes listening on {@code peerPorts}. */
  synchronized void cut(ChaosNode victim, Set<Integer> peerPorts) throws IOException {
    drop(victim.clusterPort);
    drop(victim.busPort);
    // a new connection from the victim leaves from a new ephemeral port, which refresh() finds
    // only on its next pass; Hazelcast reconnects at once and a heartbeat over such a connection
    // kept the membership whole (3/3/3 after a 90 s cut). So no new connection to the peers'
    // ports is accepted while the cut lasts: the peers already hold their connections to each
    // other, opened during the warm-up.
    for (int port : peerPorts) {
      add(
          List.of(
              "INPUT",
              "-i",
              "lo",
              "-p",
              "tcp",
              "--syn",
              "--dport",
              Integer.toString(port),
              "-j",
              "DROP"));
    }
    refresh(victim, peerPorts);
  }

  /** Adds rules for connections {@code victim} opened to {@code peerPorts} since the last call. */
  synchronized void refresh(ChaosNode victim, Set<Integer> peerPorts) throws IOException {
    for (int local : outgoingPorts(victim.pid(), peerPorts)) {
      drop(local);
    }
  }

  private void drop(int port) throws IOException {
    if (!cutPorts.add(port)) {
      return;
    }
    for (String dir : List.of("--dport", "--sport")) {
      add(List.of("INPUT", "-i", "lo", "-p", "tcp", dir, Integer.toString(port), "-j", "DROP"));
    }
  }

  private void add(List<String> spec) throws IOException {
    List<String> cmd = new ArrayList<>(List.of("iptables", "-w", "-I"));
    cmd.addAll(spec);
    Result r = run(cmd);
    if (r.exit() != 0) {
      throw new IOException(
          String.join(" ", cmd) + " exited " + r.exit() + ": " + r.output().strip());
    }
    added.add(spec);
  }

  /** Deletes every rule this partition added; returns the ones that could not be deleted (empty when all went). */
  synchronized List<String> heal() {
    List<String> failed = new ArrayList<>();
    for (List<String> spec : added) {
      List<String> cmd = new ArrayList<>(List.of("iptables", "-w", "-D"));
      cmd.addAll(spec);
      try {
        if (run(cmd).exit() != 0) {
          failed.add(String.join(" ", cmd));
        }
      } catch (IOException e) {
        failed.add(String.join(" ", cmd) + " (" + e.getMessage() + ")");
      }
    }
    added.clear();
    cutPorts.clear();
    return failed;
  }

  /** The local ports of {@code pid}'s TCP sockets whose remote port is one of {@code peerPorts}. */
  static Set<Integer> outgoingPorts(long pid, Set<Integer> peerPorts) throws IOException {
    Set<String> inodes = new HashSet<>();
    try (var fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
      for (Path fd : fds) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            inodes.add(target.substring(8, target.length() - 1));
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    }
    Set<Integer> ports = new LinkedHashSet<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      Path p = Path.of(table);
      if (Files.exists(p)) {
        ports.addAll(
            localPortsTo(Files.readAllLines(p, StandardCharsets.US_ASCII), inodes, peerPorts));
      }
    }
    return ports;
  }

  /** From {@code /proc/net/tcp} lines: local ports of the sockets in {@code inodes} connected to {@code peerPorts}. */
  static Set<Integer> localPortsTo(List<String> lines, Set<String> inodes, Set<Integer> peerPorts) {
    Set<Integer> out = new LinkedHashSet<>();
    for (String line : lines) {
      String[] f = line.trim().split("\\s+");
      if (f.length < 10 || !f[1].contains(":")) {
        continue;
      }
      int local = Integer.parseInt(f[1].substring(f[1].lastIndexOf(':') + 1), 16);
      int remote = Integer.parseInt(f[2].substring(f[2].lastIndexOf(':') + 1), 16);
      if (inodes.contains(f[9]) && peerPorts.contains(remote)) {
        out.add(local);
      }
    }
    return out;
  }

  private record Result(int exit, String output) {}

  private static Result run(List<String> cmd) throws IOException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().close();
    try {
      if (!p.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, "timed out after " + COMMAND_TIMEOUT_S + " s");
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      return new Result(-1, "interrupted");
    }
    return new Result(
        p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }
}
