package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.testing.FatJar;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/kvselect-httpbench} (needs {@code wrk}, as the README says) runs end to end on the
 * packaged jar, in its documented positional form, with a small worker count and one-second runs:
 * a bare receiver, a standalone node and a one-member clustered node, {@code /select} and
 * reserve + DELETE cycles, every figure measured (positive, no failed requests) and every ratio
 * computed. Integration-test phase (after {@code package}).
 */
class HttpBenchScriptIT {

  private static final Pattern FIGURE = Pattern.compile("([0-9.]+) \\(([0-9.]+[a-z]+)\\)");

  @Test
  void printsOneRowPerWorkloadWithEveryServerMeasured() throws Exception {
    Path logs = Files.createDirectories(Path.of("target", "httpbench-it"));
    Path out = logs.resolve("out.txt");
    ProcessBuilder pb =
        new ProcessBuilder("bin/kvselect-httpbench", "1", "4", "64")
            .redirectOutput(out.toFile())
            .redirectError(logs.resolve("err.txt").toFile());
    pb.environment().put("KVSELECT_JAR", FatJar.path().toString());
    pb.environment().put("KVSELECT_HTTPBENCH_WORKERS", "4");
    pb.environment().put("KVSELECT_JAVA_OPTS", "-Xmx256m -Dhazelcast.phone.home.enabled=false");
    Process p = pb.start();
    try {
      assertTrue(p.waitFor(300, TimeUnit.SECONDS), "the benchmark did not finish in 300 s");
    } finally {
      if (p.isAlive()) {
        new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).inheritIO().start().waitFor();
        p.waitFor(20, TimeUnit.SECONDS);
      }
    }
    String text = Files.readString(out);
    assertEquals(0, p.exitValue(), text + Files.readString(logs.resolve("err.txt")));
    assertTrue(text.contains("command: bin/kvselect-httpbench 1 4 64"), text);
    assertTrue(text.contains("load average: "), text);
    assertTrue(
        text.contains(
            "| tokens | workload | bare Vert.x req/s (p99) | standalone req/s (p99) | ratio |"
                + " clustered (1 member) req/s (p99) | ratio |"),
        text);
    List<String> rows = text.lines().filter(l -> l.startsWith("| 64 |")).toList();
    assertEquals(3, rows.size(), text);
    assertTrue(rows.get(0).startsWith("| 64 | POST /select |"), text);
    assertTrue(rows.get(1).startsWith("| 64 | reserve + DELETE cycles/s |"), text);
    assertTrue(rows.get(2).startsWith("| 64 | POST /select after the cycles |"), text);
    for (String row : rows) {
      assertFalse(row.contains("errors"), row);
      Matcher m = FIGURE.matcher(row);
      int figures = 0;
      while (m.find()) {
        assertTrue(Double.parseDouble(m.group(1)) > 0, row);
        figures++;
      }
      assertEquals(3, figures, "bare, standalone and clustered measured: " + row);
      String[] cells = row.split("\\|");
      assertTrue(Double.parseDouble(cells[5].trim()) > 0, "standalone ratio: " + row);
      assertTrue(Double.parseDouble(cells[7].trim()) > 0, "clustered ratio: " + row);
    }
  }

  @Test
  void badArgumentsExitWithTwoAndHelpPrintsTheUsage() throws Exception {
    Process bad =
        new ProcessBuilder("bin/kvselect-httpbench", "--bogus").redirectErrorStream(true).start();
    String said =
        new String(bad.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(bad.waitFor(30, TimeUnit.SECONDS));
    assertEquals(2, bad.exitValue(), said);
    assertTrue(said.contains("seconds and connections are positive integers"), said);
    Process help =
        new ProcessBuilder("bin/kvselect-httpbench", "--help").redirectErrorStream(true).start();
    String usage =
        new String(help.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(help.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, help.exitValue(), usage);
    assertTrue(usage.contains("Usage: bin/kvselect-httpbench [seconds=10]"), usage);
  }
}
