package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@link QueueWakeUp}, the harness behind docs/benchmarks.md "Router queue: waking parked
 * requests", with small numbers: 200 requests (more than three drain slices) park behind one busy
 * worker, a {@code PATCH} wakes them, and every one is served, none fails, and the lag probes
 * ticked while they were.
 */
class QueueWakeUpTest {

  @Test
  @Timeout(120)
  void wakesEveryParkedRequestAndReportsTheLag() throws Exception {
    QueueWakeUp w = new QueueWakeUp();
    new CommandLine(w).parseArgs("--parked", "200", "--runs", "1");

    QueueWakeUp.Run r = w.measure();

    assertEquals(200, r.parked());
    assertEquals(200, r.served(), "every parked request was served after the wake-up");
    assertEquals(0, r.failed());
    assertTrue(r.ticks() > 0, "the lag probes ticked");
    assertTrue(r.lagMaxMs() >= r.lagP99Ms(), r.toString());
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    QueueWakeUp.report(new PrintStream(buf, true, StandardCharsets.UTF_8), List.of(r));
    String report = buf.toString(StandardCharsets.UTF_8);
    assertTrue(report.contains("| 1 | 200 | 200 | 0 | "), report);
  }

  @Test
  void badFlagExitsWithTwo() {
    assertEquals(2, new CommandLine(new QueueWakeUp()).execute("--parked", "0"));
    assertEquals(2, new CommandLine(new QueueWakeUp()).execute("--runs", "0"));
  }
}
