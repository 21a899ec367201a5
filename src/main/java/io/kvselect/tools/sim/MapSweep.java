package io.kvselect.tools.sim;

import io.kvselect.core.kvc.AdmitAccounting;
import io.kvselect.core.kvc.KvcParams;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code --map}: every cell of open sessions x K_d multiplier runs the baselines once and
 * {@code kvc} and {@code kvc_refined} under both admission accountings, into {@code map.csv}
 * (one row per run) and {@code map.md} (per accounting: kvc's Direct share, TTFT p99 against the
 * best baseline's, and the refinement's ratio). Stateless.
 */
final class MapSweep {

  static final List<String> BASELINES = List.of("kv", "sticky", "least_loaded", "round_robin");

  private MapSweep() {}

  private record Cell(int open, double factor, Map<String, Simulator.Result> byName) {}

  static void run(SimCommand cmd, KvcParams k) throws IOException {
    StringBuilder csv =
        new StringBuilder(
            "open_sessions,kd_factor,kd_tokens,accounting,policy,requests,direct,ttft_p50_ms,ttft_p99_ms,e2e_p99_ms\n");
    List<Cell> cells = new ArrayList<>();
    for (int open : cmd.mapOpen) {
      for (double f : cmd.mapKd) {
        long kdTokens = Math.round(cmd.kd * f);
        Workload w = SimRuns.workload(cmd, kdTokens);
        Map<String, Simulator.Result> byName = new LinkedHashMap<>();
        for (String b : BASELINES) {
          byName.put(b, new Simulator(w, SimRuns.config(cmd, kdTokens, open, k), b, null).run());
        }
        for (AdmitAccounting a : AdmitAccounting.values()) {
          for (String p : List.of("kvc", "kvc_refined")) {
            byName.put(
                p + "/" + a.wire(),
                new Simulator(w, SimRuns.config(cmd, kdTokens, open, k.withAccounting(a)), p, null)
                    .run());
          }
        }
        for (Map.Entry<String, Simulator.Result> e : byName.entrySet()) {
          String[] pa = e.getKey().split("/");
          Simulator.Result r = e.getValue();
          csv.append(
              String.format(
                  Locale.ROOT,
                  "%d,%s,%d,%s,%s,%d,%.4f,%.1f,%.1f,%.1f%n",
                  open,
                  num(f),
                  kdTokens,
                  pa.length > 1 ? pa[1] : "-",
                  pa[0],
                  r.requests(),
                  r.direct(),
                  r.ttftP50(),
                  r.ttftP99(),
                  r.e2eP99()));
        }
        cells.add(new Cell(open, f, byName));
        cmd.stderr.printf(
            Locale.ROOT,
            "kvselect-sim: map open=%s kd=%sx done%n",
            open == 0 ? "all" : open,
            num(f));
      }
    }
    Files.writeString(cmd.out.resolve("map.csv"), csv.toString(), StandardCharsets.UTF_8);
    String md = markdown(cmd, cells);
    Files.writeString(cmd.out.resolve("map.md"), md, StandardCharsets.UTF_8);
    cmd.stdout.print(md);
  }

  static String num(double f) {
    return f == Math.rint(f) ? Long.toString((long) f) : Double.toString(f);
  }

  private static String markdown(SimCommand cmd, List<Cell> cells) {
    StringBuilder b =
        new StringBuilder(
            "# kvselect-sim map: open sessions x K_d, seed "
                + cmd.seed
                + ", "
                + cmd.memoryRule()
                + "\n\n");
    b.append(
        "Each cell: kvc Direct share; kvc TTFT p99 / best baseline TTFT p99 (which baseline); "
            + "kvc_refined TTFT p99 / best baseline. Below 1.00 kvc wins.\n");
    double worstRefined = 0;
    double worstPlain = 0;
    for (AdmitAccounting a : AdmitAccounting.values()) {
      b.append("\n## accounting ").append(a.wire()).append("\n\n| open \\ K_d |");
      for (double f : cmd.mapKd) {
        b.append(' ').append(num(f)).append("x |");
      }
      b.append("\n|---|");
      cmd.mapKd.forEach(f -> b.append("---|"));
      b.append('\n');
      for (int open : cmd.mapOpen) {
        b.append("| ").append(open == 0 ? "all" : Integer.toString(open)).append(" |");
        for (double f : cmd.mapKd) {
          Cell c =
              cells.stream().filter(x -> x.open == open && x.factor == f).findFirst().orElseThrow();
          String bestName = null;
          double best = Double.MAX_VALUE;
          for (String bl : BASELINES) {
            double v = c.byName.get(bl).ttftP99();
            if (v < best) {
              best = v;
              bestName = bl;
            }
          }
          Simulator.Result kv = c.byName.get("kvc/" + a.wire());
          Simulator.Result kr = c.byName.get("kvc_refined/" + a.wire());
          double rp = kv.ttftP99() / best;
          double rr = kr.ttftP99() / best;
          worstPlain = Math.max(worstPlain, rp);
          worstRefined = Math.max(worstRefined, rr);
          b.append(
              String.format(
                  Locale.ROOT, " %.0f%%; %.2f (%s); %.2f |", 100 * kv.direct(), rp, bestName, rr));
        }
        b.append('\n');
      }
    }
    b.append(
        String.format(
            Locale.ROOT,
            "%nWorst kvc / best-baseline TTFT p99 over the map: plain %.2f, refined %.2f.%n",
            worstPlain,
            worstRefined));
    return b.toString();
  }
}
