package io.kvselect.tools.chaos;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Runs the phases of one harness run on a started fleet: the load for the phase's length with its
 * fault injected after {@code leadSecs}, then (load stopped) the drain of {@code /loads} and the
 * cluster checks. Every fault is undone in a {@code finally} before the phase returns. Owned by the
 * harness's main thread.
 */
final class PhaseRunner {

  /** What a phase does to its victim. */
  enum Fault {
    NONE,
    KILL_RESTART,
    PAUSE,
    PARTITION
  }

  /** One phase to run: its name, fault and the fault's length in seconds (the down time for a kill). */
  record Phase(String name, Fault fault, double faultSecs) {}

  /** The membership snapshot of a fault is asked this long before the fault is undone, with this timeout. */
  private static final long SNAPSHOT_LEAD_NANOS = 1_000_000_000L;

  private static final Duration SNAPSHOT_TIMEOUT = Duration.ofMillis(900);

  /** The bindings must agree on every node within this long after a fault was undone. */
  static final double AGREEMENT_AFTER_SECS = 10;

  private static final Duration AGREEMENT_CALL_TIMEOUT = Duration.ofSeconds(2);

  private final ChaosFleet fleet;
  private final LifecycleLoad load;
  private final LoopbackPartition partition;
  private final ChaosOptions o;

  /** Why partition phases are skipped ({@link LoopbackPartition#unavailable}), or null when they run. */
  private final String partitionUnavailable;

  PhaseRunner(
      ChaosFleet fleet,
      LifecycleLoad load,
      LoopbackPartition partition,
      ChaosOptions o,
      String partitionUnavailable) {
    this.fleet = fleet;
    this.partitionUnavailable = partitionUnavailable;
    this.load = load;
    this.partition = partition;
    this.o = o;
  }

  PhaseResult run(Phase p) throws IOException, InterruptedException {
    ChaosNode victim = fleet.nodes.get(o.victim());
    String fault = describe(p, victim);
    if (p.fault() == Fault.PARTITION && partitionUnavailable != null) {
      return PhaseResult.skipped(p.name(), fault, partitionUnavailable);
    }
    StringBuilder notes = new StringBuilder();
    PhaseStats stats = new PhaseStats();
    System.err.printf("kvselect-chaos: phase %s: %s%n", p.name(), fault);
    long start = System.nanoTime();
    LifecycleLoad.Running running = load.start(stats, o.clients());
    LifecycleLoad.Agreement bindings;
    try {
      if (p.fault() == Fault.NONE) {
        ChaosFleet.sleepSecs(o.baselineSecs());
        bindings = load.agreement(AGREEMENT_CALL_TIMEOUT);
      } else {
        ChaosFleet.sleepSecs(o.leadSecs());
        inject(p, victim, stats, notes);
        bindings = recover(notes);
      }
    } finally {
      running.stop();
    }
    double loadSecs = (System.nanoTime() - start) / 1e9;
    String activeAtStop = activePerNode();
    Map<String, Long> unsettled = load.settle(stats);
    long drainStart = System.nanoTime();
    boolean drained =
        ChaosFleet.within(
            Duration.ofSeconds(o.drainSecs()),
            Duration.ofMillis(250),
            () -> fleet.nodes.stream().allMatch(n -> fleet.activeRequests(n) == 0));
    double drainSecs = (System.nanoTime() - drainStart) / 1e9;
    String leaked = drained ? "0" : residual();
    Map<String, Long> denied = load.retryDenied(stats);
    String leakedAfterRetry = null;
    if (!denied.isEmpty()) {
      boolean clean =
          ChaosFleet.within(
              Duration.ofSeconds(o.drainSecs()),
              Duration.ofMillis(250),
              () -> fleet.nodes.stream().allMatch(n -> fleet.activeRequests(n) == 0));
      leakedAfterRetry = clean ? "0" : residual();
    }
    boolean allMembers =
        ChaosFleet.within(
            Duration.ofSeconds(o.drainSecs()),
            Duration.ofMillis(250),
            () -> fleet.nodes.stream().allMatch(n -> fleet.members(n) == fleet.nodes.size()));
    if (!allMembers) {
      append(
          notes,
          "not every node listed "
              + fleet.nodes.size()
              + " members within "
              + o.drainSecs()
              + " s");
    }
    return new PhaseResult(
        p.name(),
        fault,
        null,
        loadSecs,
        stats.lifecycles.sum(),
        stats.failures.snapshot(),
        stats.allLatency(),
        stats.windowLatency(),
        stats.turns.sum(),
        stats.moves.sum(),
        bindings.cell(),
        activeAtStop,
        unsettled,
        leaked,
        denied,
        leakedAfterRetry,
        drainSecs,
        fleet.catalogAgreement(),
        fleet.fallbacks(),
        fleet.membersSeen(),
        notes.toString(),
        stats.failures.samples());
  }

  private void inject(Phase p, ChaosNode victim, PhaseStats stats, StringBuilder notes)
      throws IOException, InterruptedException {
    switch (p.fault()) {
      case KILL_RESTART -> {
        long killed = System.nanoTime();
        stats.faultStarted(killed);
        victim.sigkill();
        String seen = sleepThenSnapshot(p.faultSecs());
        victim.start();
        fleet.awaitReady(victim, Duration.ofSeconds(o.startTimeoutSecs()));
        victim.state = ChaosNode.State.UP;
        stats.faultEnded(System.nanoTime());
        append(notes, "members seen per node just before the restart: " + seen);
        append(
            notes,
            String.format(
                Locale.ROOT,
                "restarted %s answered /ready %.1f s after the SIGKILL",
                victim.name(),
                (System.nanoTime() - killed) / 1e9));
      }
      case PAUSE -> {
        long stopped = System.nanoTime();
        stats.faultStarted(stopped);
        try {
          victim.sigstop();
          append(
              notes,
              "members seen per node just before the SIGCONT: " + sleepThenSnapshot(p.faultSecs()));
        } finally {
          victim.sigcont();
          victim.state = ChaosNode.State.UP;
          long continued = System.nanoTime();
          stats.faultEnded(continued);
          append(
              notes, String.format(Locale.ROOT, "stopped for %.1f s", (continued - stopped) / 1e9));
        }
      }
      case PARTITION -> {
        Set<Integer> peerPorts = new HashSet<>();
        for (ChaosNode n : fleet.nodes) {
          if (n != victim) {
            peerPorts.add(n.clusterPort);
            peerPorts.add(n.busPort);
          }
        }
        long cutAt = System.nanoTime();
        stats.faultStarted(cutAt);
        long end = cutAt + Math.round(p.faultSecs() * 1e9);
        long snapshotAt = end - SNAPSHOT_LEAD_NANOS;
        String seen = null;
        try {
          victim.state = ChaosNode.State.PARTITIONED;
          partition.cut(victim, peerPorts);
          while (System.nanoTime() - end < 0) {
            Thread.sleep(Math.min(250, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
            partition.refresh(victim, peerPorts);
            if (seen == null && System.nanoTime() - snapshotAt >= 0) {
              seen = fleet.membersSnapshot(SNAPSHOT_TIMEOUT);
            }
          }
          append(notes, "members seen per node just before the heal: " + seen);
        } finally {
          List<String> left = partition.heal();
          victim.state = ChaosNode.State.UP;
          stats.faultEnded(System.nanoTime());
          if (!left.isEmpty()) {
            append(notes, "iptables rules that could not be deleted: " + String.join("; ", left));
          }
        }
      }
      case NONE -> {}
    }
  }

  /**
   * The recovery after a fault was undone, {@code recoverySecs} long under load: meanwhile notes
   * how long after the undo every node listed every member again (the merge, for a split), or
   * that they did not within the recovery; from the undo on, compares every node's bindings again
   * and again (a quarter second apart) until all agree or {@value #AGREEMENT_AFTER_SECS} s after
   * the undo have passed (the load goes on past a shorter recovery meanwhile). The cell says when
   * the last comparison ended.
   */
  private LifecycleLoad.Agreement recover(StringBuilder notes) throws InterruptedException {
    long undone = System.nanoTime();
    long end = undone + Math.round(o.recoverySecs() * 1e9);
    long compareBy = undone + Math.round(AGREEMENT_AFTER_SECS * 1e9);
    boolean whole = false;
    LifecycleLoad.Agreement bindings = null;
    int checks = 0;
    while (true) {
      long now = System.nanoTime();
      boolean agreed = bindings != null && bindings.complete();
      boolean comparing = !agreed && (bindings == null || now - compareBy < 0);
      boolean watching = !whole && now - end < 0;
      if (!comparing && !watching) {
        break;
      }
      if (watching) {
        whole = fleet.nodes.stream().allMatch(n -> fleet.members(n) == fleet.nodes.size());
        if (whole) {
          append(
              notes,
              String.format(
                  Locale.ROOT,
                  "every node listed %d members %.1f s after the fault was undone",
                  fleet.nodes.size(),
                  (System.nanoTime() - undone) / 1e9));
        }
      }
      if (comparing) {
        bindings = load.agreement(AGREEMENT_CALL_TIMEOUT).after((System.nanoTime() - undone) / 1e9);
        checks++;
      }
      Thread.sleep(250);
    }
    if (!whole) {
      append(notes, "not every node listed every member by the end of the recovery");
    }
    append(
        notes,
        String.format(
            Locale.ROOT,
            "bindings compared %d time%s, the last %.1f s after the undo",
            checks,
            checks == 1 ? "" : "s",
            bindings.afterUndoSecs()));
    long rest = end - System.nanoTime();
    if (rest > 0) {
      Thread.sleep(rest / 1_000_000);
    }
    return bindings;
  }

  /** {@code 0/2/0}: each node's active requests ({@code ?} for no answer). */
  private String activePerNode() {
    StringBuilder sb = new StringBuilder();
    for (ChaosNode n : fleet.nodes) {
      int a = fleet.activeRequests(n);
      sb.append(sb.isEmpty() ? "" : "/").append(a < 0 ? "?" : Integer.toString(a));
    }
    return sb.toString();
  }

  /** Sleeps {@code secs}, asking for the membership in its last second (a snapshot of the fault itself). */
  private String sleepThenSnapshot(double secs) throws InterruptedException {
    long end = System.nanoTime() + Math.round(secs * 1e9);
    long before = end - SNAPSHOT_LEAD_NANOS - System.nanoTime();
    if (before > 0) {
      Thread.sleep(before / 1_000_000);
    }
    String seen = fleet.membersSnapshot(SNAPSHOT_TIMEOUT);
    long rest = end - System.nanoTime();
    if (rest > 0) {
      Thread.sleep(rest / 1_000_000);
    }
    return seen;
  }

  private String residual() {
    StringBuilder sb = new StringBuilder();
    for (ChaosNode n : fleet.nodes) {
      int a = fleet.activeRequests(n);
      append(sb, n.name() + ": " + (a < 0 ? "no answer" : Integer.toString(a)));
    }
    return sb.toString();
  }

  private String describe(Phase p, ChaosNode victim) {
    String v = victim.name();
    return switch (p.fault()) {
      case NONE -> "none";
      case KILL_RESTART ->
          "SIGKILL "
              + v
              + " after "
              + fmt(o.leadSecs())
              + " s, restart (same ports) "
              + fmt(p.faultSecs())
              + " s later, wait for /ready, then "
              + fmt(o.recoverySecs())
              + " s";
      case PAUSE ->
          "SIGSTOP "
              + v
              + " after "
              + fmt(o.leadSecs())
              + " s for "
              + fmt(p.faultSecs())
              + " s (not called meanwhile), SIGCONT, then "
              + fmt(o.recoverySecs())
              + " s";
      case PARTITION ->
          "iptables DROP of "
              + v
              + "'s member and event-bus ports on lo after "
              + fmt(o.leadSecs())
              + " s for "
              + fmt(p.faultSecs())
              + " s (still called), then "
              + fmt(o.recoverySecs())
              + " s";
    };
  }

  private static String fmt(double secs) {
    return secs == Math.rint(secs) ? Long.toString((long) secs) : Double.toString(secs);
  }

  private static void append(StringBuilder sb, String s) {
    if (!sb.isEmpty()) {
      sb.append("; ");
    }
    sb.append(s);
  }
}
