package io.kvselect.tools.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.testing.ChildProcess;
import io.kvselect.testing.FatJar;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/kvselect-chaos --short} end to end against the fat jar {@code package} built: three
 * clustered processes, the baseline, a SIGKILL + restart and a SIGSTOP. Every phase must print its
 * table, leave no booking behind on any node and end with equal catalogs everywhere, and after the
 * baseline and the restart every session must be on one worker on every node; no latency or
 * throughput figure is asserted. {@link ChildProcess} stops the harness and anything it left by PID.
 */
class ChaosHarnessIT {

  private static final List<String> PHASES = List.of("baseline", "sigkill-restart", "sigstop");
  private static final java.util.regex.Pattern BINDINGS =
      java.util.regex.Pattern.compile(
          "\\| sessions on one worker on every node \\(POST /select\\)[^|]*\\| ([0-9]+) of ([0-9]+) on all [0-9]+ nodes");

  @Test
  void theShortRunPrintsEveryPhaseWithNoLeakAndEqualCatalogs() throws Exception {
    Path jar = FatJar.path();
    Path logs = Path.of("target", "chaos-it");
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "env",
                "KVSELECT_JAR=" + jar,
                "./bin/kvselect-chaos",
                "--short",
                "--logs",
                logs.resolve("nodes").toString()));
    String out;
    try (ChildProcess harness = ChildProcess.start(Path.of("."), logs, "kvselect-chaos", cmd)) {
      int exit = harness.await(600);
      out = harness.stdout();
      assertEquals(
          0,
          exit,
          () ->
              "exit " + exit + "\nstdout:\n" + harness.stdout() + "\nstderr:\n" + harness.stderr());
    }

    assertTrue(out.contains("- command: `bin/kvselect-chaos --short"), out);
    assertTrue(out.contains("- commit: "), out);
    for (int i = 0; i < PHASES.size(); i++) {
      String heading = "### phase " + (i + 1) + ": " + PHASES.get(i);
      int at = out.indexOf(heading);
      assertTrue(at >= 0, () -> heading + " missing:\n" + out);
      int end = out.indexOf("\n### ", at + heading.length());
      String table = out.substring(at, end < 0 ? out.length() : end);
      assertTrue(table.contains("| lifecycles completed | "), table);
      assertTrue(
          table.contains("| leaked bookings after the phase | 0 ("),
          () -> "a booking was left:\n" + table);
      assertTrue(
          table.contains("| catalog agreement (GET /workers) | equal ("),
          () -> "catalogs differ:\n" + table);
      assertTrue(table.contains("| members seen per node (GET /cluster) | "), table);
      java.util.regex.Matcher bound = BINDINGS.matcher(table);
      assertTrue(bound.find(), () -> "no bindings row:\n" + table);
      if (!PHASES.get(i).equals("sigstop")) {
        // the paused node answers 503 until it has merged back (6.8-7.7 s after the SIGCONT in
        // four short runs on a quiet machine): too close to the 10 s bound to assert in CI
        assertEquals(
            bound.group(1), bound.group(2), () -> "a session is on different workers:\n" + table);
      }
    }
    assertTrue(out.contains("### summary"), out);
    long rows =
        out.substring(out.indexOf("### summary")).lines().filter(l -> l.startsWith("| ")).count();
    assertEquals(1 + PHASES.size(), rows, () -> "a header and one row per phase:\n" + out);
    assertTrue(!out.contains("partition"), () -> "--short runs no partition:\n" + out);
  }
}
