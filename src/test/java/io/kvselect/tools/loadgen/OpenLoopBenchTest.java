package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The table of {@link OpenLoopBench}: each target judged from the figures in its row (results
 * built from recorded latencies, no server involved), rates above 50% of the maximum not judged,
 * and bad flags refused with exit 2 before anything starts.
 */
class OpenLoopBenchTest {

  /** 98 answers at {@code p50Micros} and 2 at {@code p99Micros}, every request on schedule. */
  private static OpenLoopGenerator.Result result(double rate, long p50Micros, long p99Micros) {
    return result(rate, p50Micros, p99Micros, 50);
  }

  /** The same, every request taken up {@code lagMicros} late. */
  private static OpenLoopGenerator.Result result(
      double rate, long p50Micros, long p99Micros, long lagMicros) {
    OpenLoopStats s = new OpenLoopStats();
    s.latency.recordValueWithCount(p50Micros, 98);
    s.latency.recordValueWithCount(p99Micros, 2);
    s.sendLatency.add(s.latency);
    s.lag.recordValueWithCount(lagMicros, 100);
    s.dispatched = 100;
    s.completed = 100;
    s.completedInWindow = 100;
    s.calls = 100;
    return new OpenLoopGenerator.Result(
        OpenLoopOptions.Mode.OPEN, rate, 100 / rate, 2, 64, 0L, 2_500_000L, 2, s);
  }

  @Test
  void targetsAreJudgedFromEachRowUpToHalfTheMaximum() {
    List<OpenLoopBench.Row> rows =
        List.of(
            new OpenLoopBench.Row(0.25, 100, "bare receiver", result(100, 1_000, 4_000), 0.5),
            new OpenLoopBench.Row(0.25, 100, "kvselect /select", result(100, 1_100, 7_000), 0.5),
            new OpenLoopBench.Row(
                0.25, 100, "kvselect /select_and_reserve + DELETE", result(100, 1_500, 9_000), 0.5),
            new OpenLoopBench.Row(0.5, 200, "bare receiver", result(200, 1_000, 4_000), 0.5),
            new OpenLoopBench.Row(
                0.5, 200, "kvselect /select", result(200, 900, 5_000, 5_000), 0.5),
            new OpenLoopBench.Row(0.75, 300, "bare receiver", result(300, 1_000, 12_000), 0.5));
    OpenLoopGenerator.Result closed = result(400, 1_000, 2_000);
    ByteArrayOutputStream buf = new ByteArrayOutputStream();

    new OpenLoopBench()
        .report(
            new PrintStream(buf, true, StandardCharsets.UTF_8),
            new OpenLoopBench.Setup(
                "2026-01-01 00:00 UTC",
                0.5,
                0.6,
                400,
                closed,
                result(800, 500, 1_000),
                result(150, 2_000, 3_000),
                1,
                2),
            rows);

    String out = buf.toString(StandardCharsets.UTF_8);
    assertTrue(out.contains("- 100 req/s, bare receiver: p99 4.001 ms <= 10 ms: met"), out);
    assertTrue(
        out.contains(
            "- 100 req/s, kvselect /select: p99 1.75x of bare: met; p50 added 0.100 ms: met"),
        out);
    assertTrue(
        out.contains(
            "- 100 req/s, kvselect /select_and_reserve + DELETE: p99 2.25x of bare: **missed**; "
                + "p50 added 0.500 ms: **missed**"),
        out);
    assertTrue(
        out.contains(
            "- 200 req/s, kvselect /select: inconclusive, the generator fell behind (p99 5.003 ms "
                + "here, 0.050 ms on the bare receiver) [p99 1.25x of bare: met; p50 added -0.100 ms: met]"),
        out);
    assertTrue(
        out.contains(
            "| 200 (50%) | kvselect /select | 200 | 0.900 | 5.003 | 5.003 | -0.100 | 1.25x | "
                + "5.003 / 5.003 | **no** |"),
        out);
    assertFalse(out.contains("- 300 req/s"), "75% of the maximum is reported, not judged");
    assertTrue(out.contains("| 300 (75%) | bare receiver | 300 | 1.000 | 12.007 |"), out);
    assertTrue(
        out.contains(
            "| 100 (25%) | kvselect /select | 100 | 1.100 | 7.003 | 7.003 | 0.100 | 1.75x | "
                + "0.050 / 0.050 | yes | 25 | 0 | 0 |"),
        out);
    assertTrue(out.contains("kvselect at 0.50x of it"), out);
    assertTrue(out.contains("`/select_and_reserve` + `DELETE` (measured after the above"), out);
    assertTrue(out.contains(": 150 cycles/s, reserve p50 2.00 ms"), out);
  }

  @Test
  void badFlagsExitWithTwo() {
    assertEquals(2, new CommandLine(new OpenLoopBench()).execute("--seconds", "0"));
    assertEquals(2, new CommandLine(new OpenLoopBench()).execute("--fractions", "0.25,-1"));
    assertEquals(2, new CommandLine(new OpenLoopBench()).execute("--event-loops", "65"));
  }
}
