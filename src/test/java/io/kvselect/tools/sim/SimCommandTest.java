package io.kvselect.tools.sim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line: outputs, byte-identical results for a seed, --help with defaults, the map. */
class SimCommandTest {

  @BeforeAll
  static void headless() {
    System.setProperty("java.awt.headless", "true");
  }

  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    SimCommand c = new SimCommand();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    c.stdout = new PrintStream(out, true, StandardCharsets.UTF_8);
    c.stderr = new PrintStream(err, true, StandardCharsets.UTF_8);
    var cl = SimCommand.commandLine(c);
    cl.setOut(new java.io.PrintWriter(out, true, StandardCharsets.UTF_8));
    cl.setErr(new java.io.PrintWriter(err, true, StandardCharsets.UTF_8));
    int exit = cl.execute(args);
    return new Run(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static String[] small(Path out, long seed) {
    return new String[] {
      "--workload",
      "agentic",
      "--sessions",
      "6",
      "--requests",
      "150",
      "--seed",
      Long.toString(seed),
      "--out",
      out.toString(),
      "--max-open-sessions",
      "3",
      "--admit-accounting",
      "net"
    };
  }

  @Test
  void dumpRequestsTracesEveryDecision(@TempDir Path dir) throws Exception {
    String[] args =
        java.util.stream.Stream.concat(
                Arrays.stream(small(dir, 11)),
                java.util.stream.Stream.of(
                    "--dump-requests",
                    "--decode-reserve",
                    "after-prefill",
                    "--policies",
                    "kvc,kv",
                    "--no-plots"))
            .toArray(String[]::new);
    Run r = run(args);
    assertEquals(0, r.exit(), r.err());
    List<String> rows = Files.readAllLines(dir.resolve("requests.csv"));
    assertEquals(Simulator.DUMP_HEADER, rows.get(0));
    long kvcRows = rows.stream().filter(l -> l.startsWith("kvc,")).count();
    assertEquals(
        kvcRows,
        rows.stream().filter(l -> l.startsWith("kv,")).count(),
        "a row per request and policy");
    assertTrue(kvcRows > 100, "rows: " + kvcRows);
    String first = rows.stream().filter(l -> l.startsWith("kvc,")).findFirst().orElseThrow();
    String[] f = first.split(",");
    assertEquals(Simulator.DUMP_HEADER.split(",").length, f.length, first);
    assertEquals("seed", f[8], "a session's first turn is seeded: " + first);
    assertTrue(
        f[13].matches("(\\d+:\\d+\\+\\d+;?)+"), "the admission inputs per decode worker: " + first);
    assertTrue(
        Files.readString(dir.resolve("results.md"))
            .contains("decode memory reserved after prefill"));
  }

  @Test
  void sameSeedSameBytesAndTheListedColumns(@TempDir Path dir) throws Exception {
    Run a = run(small(dir.resolve("a"), 11));
    assertEquals(0, a.exit(), a.err());
    Run b = run(small(dir.resolve("b"), 11));
    assertEquals(0, b.exit(), b.err());
    byte[] ca = Files.readAllBytes(dir.resolve("a/results.csv"));
    assertArrayEquals(
        ca, Files.readAllBytes(dir.resolve("b/results.csv")), "byte-identical for the same seed");
    Run c = run(small(dir.resolve("c"), 12));
    assertFalse(
        Arrays.equals(ca, Files.readAllBytes(dir.resolve("c/results.csv"))),
        "another seed differs");
    List<String> lines = Files.readAllLines(dir.resolve("a/results.csv"));
    assertEquals(
        "policy,requests,direct,seed,reseed,fallback,hit_rate,ttft_p50_ms,ttft_p90_ms,ttft_p99_ms,"
            + "e2e_p50_ms,e2e_p99_ms,p_busy_share,migrations,fallbacks,worker_changes,rejects",
        lines.get(0));
    assertEquals(6, lines.size(), "a row per default policy");
    assertEquals(
        List.of("kvc", "kv", "sticky", "least_loaded", "round_robin"),
        lines.subList(1, 6).stream().map(l -> l.split(",")[0]).toList());
    for (String l : lines.subList(1, 6)) {
      assertEquals(17, l.split(",").length, l);
    }
    assertTrue(Files.readString(dir.resolve("a/results.md")).contains("| kvc |"));
    assertTrue(
        Files.readString(dir.resolve("a/results.md"))
            .lines()
            .findFirst()
            .orElseThrow()
            .endsWith("decode memory reserved at dispatch (--decode-reserve at-dispatch)"),
        "the memory rule in the header");
    assertTrue(Files.size(dir.resolve("a/" + Plots.TTFT_CDF)) > 1000);
    assertTrue(Files.size(dir.resolve("a/" + Plots.MODE_SHARE)) > 1000);
    assertTrue(a.out().contains("round_robin"), a.out());
  }

  @Test
  void helpShowsEveryAssumptionWithItsDefault() {
    Run h = run("--help");
    assertEquals(0, h.exit());
    for (String s :
        List.of(
            "--kd",
            "92104",
            "--sessions",
            "52",
            "--requests",
            "4449",
            "--concurrency",
            "32",
            "--prefill-ms-per-token",
            "0.1",
            "--transfer-ms-per-token",
            "0.02",
            "--decode-ms-per-token",
            "20",
            "--slots",
            "16",
            "--prompt-cap",
            "87000",
            "--tau-append",
            "8192",
            "--rho",
            "0.95",
            "--admit-accounting",
            "--reset-scope",
            "--admit-waiting",
            "--max-open-sessions",
            "--d-queue")) {
      assertTrue(h.out().contains(s), s + " in --help");
    }
  }

  @Test
  void badFlagsAreUsageErrors(@TempDir Path dir) {
    assertEquals(2, run("--out", dir.toString(), "--admit-accounting", "gross").exit());
    assertEquals(2, run("--out", dir.toString(), "--workload", "mooncake").exit());
    assertEquals(2, run("--out", dir.toString(), "--d-queue", "lifo").exit());
  }

  @Test
  void aMissingTraceIsOneLineAndExit2(@TempDir Path dir) {
    Path none = dir.resolve("no-such-trace.jsonl");
    Run r =
        run(
            "--workload",
            "mooncake",
            "--trace",
            none.toString(),
            "--out",
            dir.resolve("o").toString());
    assertEquals(2, r.exit(), r.err());
    assertEquals(
        List.of("kvselect-sim: --trace " + none + ": no such file"), r.err().lines().toList());
    assertFalse(Files.exists(dir.resolve("o")), "nothing written");
  }

  @Test
  void anUnknownPolicyFailsBeforeAnyRun(@TempDir Path dir) {
    String[] args = small(dir.resolve("o"), 1);
    String[] withPolicies = Arrays.copyOf(args, args.length + 2);
    withPolicies[args.length] = "--policies";
    withPolicies[args.length + 1] = "kv,fastest";
    Run r = run(withPolicies);
    assertEquals(2, r.exit(), r.err());
    assertEquals(
        List.of(
            "kvselect-sim: --policies: unknown policy 'fastest' (one of kvc, kvc_refined, kv, sticky, "
                + "least_loaded, round_robin)"),
        r.err().lines().toList(),
        "no progress lines: kv did not run first");
    assertEquals("", r.out());
  }

  @Test
  void everyUsageErrorIsReportedOnItsOwnLine(@TempDir Path dir) {
    Run r = run("--out", dir.toString(), "--policies", "kvc,x", "--d-queue", "lifo", "--rho", "2");
    assertEquals(2, r.exit(), r.err());
    List<String> lines = r.err().lines().toList();
    assertEquals(3, lines.size(), r.err());
    assertTrue(lines.get(0).contains("'x'"), lines.get(0));
    assertTrue(
        lines.get(1).startsWith("kvselect-sim: --d-queue must be fifo or first-fit"), lines.get(1));
    assertTrue(lines.get(2).startsWith("kvselect-sim: kvc rho must be in (0, 1]"), lines.get(2));
  }

  @Test
  void anUnknownFlagIsOneLineWithTheNearestFlag() {
    Run r = run("--sesions", "5");
    assertEquals(2, r.exit());
    List<String> lines = r.err().lines().toList();
    assertEquals(1, lines.size(), r.err());
    assertTrue(
        lines.get(0).startsWith("kvselect-sim: Unknown options: '--sesions', '5'"), lines.get(0));
    assertTrue(lines.get(0).contains("did you mean --sessions?"), lines.get(0));
  }

  @Test
  void versionPrintsTheBuildVersion() {
    Run r = run("--version");
    assertEquals(0, r.exit());
    assertTrue(r.out().startsWith("kvselect-sim "), r.out());
    assertTrue(r.out().strip().length() > "kvselect-sim ".length(), r.out());
  }

  @Test
  void aSmallMap(@TempDir Path dir) throws Exception {
    Run m =
        run(
            "--map",
            "--map-open",
            "2,0",
            "--map-kd",
            "1",
            "--sessions",
            "5",
            "--requests",
            "60",
            "--out",
            dir.toString(),
            "--no-plots");
    assertEquals(0, m.exit(), m.err());
    List<String> rows = Files.readAllLines(dir.resolve("map.csv"));
    assertEquals(
        1 + 2 * (4 + 4),
        rows.size(),
        "per cell: 4 baselines + kvc and kvc_refined x 2 accountings");
    assertTrue(Files.readString(dir.resolve("map.md")).contains("## accounting net"));
  }
}
