package io.kvselect.tools.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The Markdown the harness prints: a table per phase and a summary row per phase, skipped phases included. */
class ReportTest {

  private static PhaseResult faulted() {
    Map<String, Map<String, Long>> failures = new TreeMap<>();
    failures.put("select", new TreeMap<>(Map.of("503", 2L, "timeout", 3L)));
    failures.put("delete", Map.of("404", 1L));
    return new PhaseResult(
        "sigstop",
        "SIGSTOP node2",
        null,
        20.0,
        400,
        failures,
        new Latency(500, 1.25, 2001, 2017),
        new Latency(10, 150, 1999, 2000.4),
        390,
        2,
        "199 of 200 on all 3 nodes, 9.8 s after the undo (e.g. chaos-s7: node0=1, node1=1, node2=none (503))",
        "1/1/1",
        new TreeMap<>(Map.of("200", 1L, "404", 2L)),
        "0",
        Map.of(),
        null,
        1.5,
        "equal (4 workers on 3 nodes)",
        "n/a",
        "3/3/3",
        "a | note",
        Map.of("delete: 404", "{\"error\":\"reservation x not found\"}"));
  }

  private static String print(java.util.function.Consumer<PrintStream> body) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    body.accept(out);
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aPhaseTableHasEveryMeasure() {
    String t = print(out -> Report.phase(out, 3, faulted()));

    assertTrue(t.startsWith("### phase 3: sigstop\n\n| measure | value |\n|---|---|\n"), t);
    assertTrue(t.contains("| lifecycles completed | 400 |"), t);
    assertTrue(t.contains("| lifecycles per second | 20.0 |"), t);
    assertTrue(
        t.contains("| non-2xx and timeouts | delete: 404 x1; select: 503 x2, timeout x3 |"), t);
    assertTrue(
        t.contains(
            "| select_and_reserve p50 / p99 / max ms, whole phase | 1.3 / 2001 / 2017 (n=500) |"),
        t);
    assertTrue(t.contains("fault window after its first 5 s | 150 / 1999 / 2000 (n=10) |"), t);
    assertTrue(t.contains("| binding moves | 2 of 390 repeat turns |"), t);
    assertTrue(
        t.contains(
            "| sessions on one worker on every node (POST /select), within 10 s of the undo | 199 of 200 on all 3"
                + " nodes, 9.8 s after the undo (e.g. chaos-s7: node0=1, node1=1, node2=none (503)) |"),
        t);
    assertTrue(t.contains("freed after the load: last answer | 3 (200 x1, 404 x2) |"), t);
    assertTrue(t.contains("| leaked bookings after the phase | 0 (drain 1.5 s) |"), t);
    assertTrue(
        t.contains("| catalog agreement (GET /workers) | equal (4 workers on 3 nodes) |"), t);
    assertTrue(t.contains("| fallbacks used (kvselect_cluster_fallbacks_total) | n/a |"), t);
    assertTrue(t.contains("| members seen per node (GET /cluster) | 3/3/3 |"), t);
    assertTrue(t.contains("| notes | a \\| note |"), "a pipe in a cell is escaped: " + t);
    assertTrue(
        t.contains("| first answer of delete: 404 | `{\"error\":\"reservation x not found\"}` |"),
        t);
  }

  @Test
  void theSummaryHasOneRowPerPhaseWithTheSameColumnCount() {
    PhaseResult skipped =
        PhaseResult.skipped("partition", "iptables DROP", "iptables is not installed");
    String t = print(out -> Report.summary(out, List.of(faulted(), skipped)));

    List<String> rows = t.lines().filter(l -> l.startsWith("|")).toList();
    assertEquals(4, rows.size(), t);
    long columns = rows.get(0).chars().filter(c -> c == '|').count();
    for (String r : rows) {
      assertEquals(columns, r.replace("\\|", "").chars().filter(c -> c == '|').count(), r);
    }
    assertEquals(
        "| sigstop | 400 | 20.0 | 3 | 3 | 1.3 / 2001 / 2017 (n=500) | 150 / 1999 / 2000 (n=10) | 2 | 199 of 200 at 9.8 s "
            + "| 0 | equal (4 workers on 3 nodes) | n/a | 3/3/3 |",
        rows.get(2));
    assertTrue(
        rows.get(3).startsWith("| partition | skipped: iptables is not installed |"), rows.get(3));
  }

  @Test
  void deniedDeletesRetriedShowWhatWasLeftOfTheLeak() {
    PhaseResult f = faulted();
    PhaseResult r =
        new PhaseResult(
            f.name(),
            f.fault(),
            null,
            f.loadSecs(),
            f.lifecycles(),
            f.failures(),
            f.latency(),
            f.window(),
            f.turns(),
            f.moves(),
            f.bindings(),
            f.activeAtStop(),
            f.unsettled(),
            "node0: 7; node1: 7",
            new TreeMap<>(Map.of("200", 7L, "404", 3L)),
            "0",
            f.drainSecs(),
            f.catalog(),
            f.fallbacks(),
            f.members(),
            "",
            f.samples());
    String t = print(out -> Report.phase(out, 5, r));

    assertTrue(
        t.contains("| leaked bookings after the phase | node0: 7; node1: 7 (drain 1.5 s) |"), t);
    assertTrue(t.contains("retried after the leak check: last answer | 10 (200 x7, 404 x3) |"), t);
    assertTrue(t.contains("| leaked bookings after those retries | 0 |"), t);
    assertEquals(
        "node0: 7; node1: 7 (after retrying 10 DELETEs that had answered 404: 0)",
        Report.leakedCell(r));
    assertEquals("0", Report.leakedCell(f), "no retries, no remark");
    assertTrue(
        print(out -> Report.phase(out, 3, f))
            .contains("retried after the leak check: last answer | none |"));
  }

  @Test
  void aSkippedPhaseSaysWhy() {
    String t =
        print(
            out ->
                Report.phase(
                    out, 4, PhaseResult.skipped("partition", "iptables DROP", "no iptables")));
    assertTrue(t.contains("| result | skipped: no iptables |"), t);
  }

  @Test
  void nothingMeasuredIsADashAndAnEmptyFaultWindowSaysWhy() {
    assertEquals("—", Latency.NONE.cell());
    assertEquals("no call started in it", Report.windowCell(Latency.NONE));
  }
}
