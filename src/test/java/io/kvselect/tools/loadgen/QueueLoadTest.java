package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@link QueueLoad} against its in-process node on a fleet ten times too slow for the offered
 * load: one worker that prefills 1,000 tokens/s gets 256-token prompts (no shared prefix, no body
 * sent twice, so nothing is cached) at 40 req/s for 3 s, about 4 req/s of capacity, with a 1 s
 * queue timeout. Requests are served, the queue fills and requests time out, whatever the speed
 * of the machine (a slower machine only deepens the overload).
 */
class QueueLoadTest {

  @Test
  @Timeout(60)
  void overloadedFleetQueuesServesAndTimesOut() throws Exception {
    QueueLoad q = new QueueLoad();
    new CommandLine(q)
        .parseArgs(
            "--rate",
            "40",
            "--duration",
            "3",
            "--queue-timeout-secs",
            "1",
            "--workers",
            "1",
            "--batch-tokens",
            "256",
            "--isl",
            "256",
            "--shared-prefix",
            "0",
            "--pool",
            "256",
            "--prefill-tokens-per-sec",
            "1000",
            "--decode-ms",
            "50",
            "--event-loops",
            "1",
            "--connections",
            "256");

    QueueLoad.Result r = q.measure();

    QueueLoadStats s = r.stats();
    assertEquals(120, r.sent());
    assertEquals(0, s.otherCount(), () -> "other outcomes: " + s.other);
    assertEquals(
        r.sent(),
        s.served.getTotalCount() + s.rejected.getTotalCount(),
        "every request got 200 or 429");
    assertEquals(
        0,
        r.unfinished(),
        () ->
            "every request finished, every reservation was freed; unfinished by step: "
                + r.unfinishedBySteps());
    assertTrue(s.served.getTotalCount() > 0, "some requests were served");
    assertTrue(r.pendingMax() > 0, "requests waited in the router queue");
    long timeouts = s.rejectedCount("timeout");
    assertTrue(timeouts > 0, "queue waits ended in 429 timeout");
    assertEquals(
        timeouts, r.queueWaits().get("timeout").count(), "the node counted the same timeouts");
    assertEquals(0, s.prefillCompleteErrors + s.freeErrors, "engine calls succeeded");

    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    q.report(new PrintStream(buf, true, StandardCharsets.UTF_8), r);
    String report = buf.toString(StandardCharsets.UTF_8);
    assertTrue(report.contains("| 429 `timeout` | " + timeouts + " |"), report);
    assertTrue(report.contains("| timeout | " + timeouts + " |"), report);
  }

  @Test
  void badFlagExitsWithTwo() {
    assertEquals(2, new CommandLine(new QueueLoad()).execute("--rate", "0"));
    assertEquals(2, new CommandLine(new QueueLoad()).execute("--shared-prefix", "1.5"));
  }
}
