package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The trace replay on a small generated Mooncake-format trace: 300 requests, each one of 5 shared
 * 3-block prefixes followed by a continuation of an earlier request or fresh blocks, over 8
 * workers with 12-block caches (so the LRU evicts).
 */
class TraceReplayTest {

  private static final int REQUESTS = 300;

  @TempDir Path dir;

  @Test
  void opCountsAreDeterministicForASeedAndConsistentWithTheCaches() throws IOException {
    List<MooncakeTrace.Request> trace = MooncakeTrace.read(writeTrace());
    ReplayWorkload a = ReplayWorkload.build(trace, 8, 2, 12, 16, 7, 2, ReplayWorkload.Apply.INDEX);
    ReplayWorkload b = ReplayWorkload.build(trace, 8, 2, 12, 16, 7, 2, ReplayWorkload.Apply.INDEX);
    ReplayWorkload other =
        ReplayWorkload.build(trace, 8, 2, 12, 16, 8, 2, ReplayWorkload.Apply.INDEX);
    ReplayWorkload.Counts c = a.counts;

    assertEquals(c, b.counts, "same seed, same operations");
    assertNotEquals(c, other.counts, "another seed assigns requests to other workers");
    long blocks = trace.stream().mapToLong(r -> r.hashIds().length).sum();
    assertEquals(REQUESTS, c.requests());
    assertEquals(2L * REQUESTS, c.lookups(), "every request is one lookup per duplicate");
    assertEquals(2 * blocks, c.lookupBlocks());
    assertTrue(c.removeEvents() > 0, "12-block caches evict");
    assertEquals(
        c.cachedAtEnd(),
        c.storedBlocks() - c.removedBlocks(),
        "every stored block is cached until removed");
    long ops = 0;
    for (ReplayWorkload.Timeline t : a.timelines) {
      ops += t.size();
      for (int i = 1; i < t.size(); i++) {
        assertTrue(t.ticks[i - 1] <= t.ticks[i], "timeline sorted by trace time");
      }
    }
    assertEquals(c.lookups() + c.events(), ops, "every operation lands on exactly one thread");
  }

  @Test
  @Timeout(120)
  void replayAppliesEveryEventAndCountsEveryLookup() throws Exception {
    List<MooncakeTrace.Request> trace = MooncakeTrace.read(writeTrace());
    for (ReplayWorkload.Apply mode : ReplayWorkload.Apply.values()) {
      ReplayWorkload w = ReplayWorkload.build(trace, 8, 1, 12, 16, 7, 1, mode);
      ReplayRun.Result r = ReplayRun.run(w, 0);
      assertEquals(REQUESTS, r.lookups(), mode + ": every lookup ran");
      assertEquals(REQUESTS, r.service().getTotalCount(), mode + ": every lookup was timed");
      assertEquals(0, r.rejectedStores(), mode + ": every store found its parent");
      assertEquals(w.counts.cachedAtEnd(), r.indexSize(), mode + ": the index holds the caches");
      ReplayWorkload idx =
          ReplayWorkload.build(trace, 8, 1, 12, 16, 7, 1, ReplayWorkload.Apply.INDEX);
      assertEquals(
          ReplayRun.run(idx, 0).scored(),
          r.scored(),
          mode + ": one thread, same scored ranks whichever path applies the events");
      assertTrue(r.scored() > REQUESTS, "lookups find cached prefixes");
      for (ReplayRun.Lookup form : ReplayRun.Lookup.values()) {
        ReplayRun.Result f = ReplayRun.run(w, 0, form, true);
        assertEquals(r.scored(), f.scored(), mode + ", " + form + ": same scored ranks");
        assertEquals(REQUESTS, f.serviceRead().getTotalCount(), form + ": every read was timed");
      }
    }
  }

  @Test
  @Timeout(120)
  void printsOneRowPerRateThenTheMaximumAndTheKnee() throws Exception {
    Path file = writeTrace();
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    TraceReplay replay =
        new TraceReplay().printTo(new PrintStream(buf, true, StandardCharsets.UTF_8), "test");
    int exit =
        new CommandLine(replay)
            .execute(
                "--trace",
                file.toString(),
                "--workers",
                "8",
                "--duplicate",
                "2",
                "--rates",
                "20000,2000",
                "--block-size",
                "16",
                "--cache-blocks",
                "12",
                "--threads",
                "2",
                "--warmup",
                "1",
                "--lookup",
                "scores",
                "--read",
                "all");
    String report = buf.toString(StandardCharsets.UTF_8);

    assertEquals(0, exit, report);
    List<String[]> rows = new ArrayList<>();
    for (String line : report.split("\n")) {
      if (line.startsWith("| ") && !line.startsWith("| offered")) {
        rows.add(line.substring(2, line.length() - 2).split(" \\| "));
      }
    }
    assertEquals(3, rows.size(), report);
    assertEquals("2,000", rows.get(0)[0], "rates ascending");
    assertEquals("20,000", rows.get(1)[0]);
    assertTrue(rows.get(2)[0].startsWith("max"), report);
    ReplayWorkload w =
        ReplayWorkload.build(
            MooncakeTrace.read(file), 8, 2, 12, 16, 42, 2, ReplayWorkload.Apply.INDEX);
    for (String[] row : rows) {
      assertEquals(18, row.length, report);
      assertTrue(!row[16].equals("n/a") && !row[17].equals("n/a"), "call+read: " + report);
      assertEquals(String.format("%,d", 2 * REQUESTS), row[5], "every lookup counted: " + report);
      assertEquals("0", row[11], "no rejected store");
      assertEquals(String.format("%,d", w.counts.cachedAtEnd()), row[12], report);
    }
    assertTrue(report.contains("- operations per replay: 600 lookups"), report);
    assertTrue(report.contains("- passes: 1 unrecorded warm-up pass(es)"), report);
    assertTrue(report.lines().anyMatch(l -> l.startsWith("knee: ")), report);
  }

  @Test
  void badFlagsExitWithTwo() throws IOException {
    Path file = writeTrace();
    assertEquals(2, new CommandLine(new TraceReplay()).execute("--workers", "8"));
    assertEquals(
        2,
        new CommandLine(new TraceReplay()).execute("--trace", file.toString(), "--warmup", "-1"));
    assertEquals(
        2,
        new CommandLine(new TraceReplay())
            .execute("--trace", file.toString(), "--workers", "9", "--duplicate", "2"));
    assertEquals(
        2, new CommandLine(new TraceReplay()).execute("--trace", file.toString(), "--rates", "0"));
    assertEquals(
        2,
        new CommandLine(new TraceReplay()).execute("--trace", file.toString(), "--lookup", "map"));
    assertEquals(
        2,
        new CommandLine(new TraceReplay()).execute("--trace", file.toString(), "--read", "some"));
  }

  /** 5 shared 3-block prefixes; a request continues an earlier one (60%) or starts fresh. */
  private Path writeTrace() throws IOException {
    SplittableRandom rnd = new SplittableRandom(3);
    long nextId = 100;
    List<long[]> seen = new ArrayList<>();
    StringBuilder sb = new StringBuilder();
    long ts = 0;
    for (int i = 0; i < REQUESTS; i++) {
      List<Long> ids = new ArrayList<>();
      if (!seen.isEmpty() && rnd.nextDouble() < 0.6) {
        for (long id : seen.get(rnd.nextInt(seen.size()))) {
          ids.add(id);
        }
      } else {
        int p = rnd.nextInt(5);
        for (int b = 0; b < 3; b++) {
          ids.add((long) (p * 3 + b));
        }
      }
      int fresh = 1 + rnd.nextInt(4);
      for (int b = 0; b < fresh; b++) {
        ids.add(nextId++);
      }
      long[] arr = ids.stream().mapToLong(Long::longValue).toArray();
      seen.add(arr);
      ts += rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(50);
      sb.append("{\"timestamp\": ")
          .append(ts)
          .append(", \"input_length\": ")
          .append(arr.length * 16)
          .append(", \"output_length\": 10, \"hash_ids\": ")
          .append(ids)
          .append("}\n");
    }
    Path f = dir.resolve("trace.jsonl");
    Files.writeString(f, sb.toString(), StandardCharsets.UTF_8);
    return f;
  }
}
