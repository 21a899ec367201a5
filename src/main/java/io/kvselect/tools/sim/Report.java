package io.kvselect.tools.sim;

import java.util.List;
import java.util.Locale;

/** Formats run results: the CSV (fixed columns), a Markdown table and the stdout table. Stateless. */
final class Report {

  static final String CSV_HEADER =
      "policy,requests,direct,seed,reseed,fallback,hit_rate,ttft_p50_ms,"
          + "ttft_p90_ms,ttft_p99_ms,e2e_p50_ms,e2e_p99_ms,p_busy_share,migrations,fallbacks,worker_changes,rejects";

  private Report() {}

  static String csv(List<Simulator.Result> rs) {
    StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
    for (Simulator.Result r : rs) {
      b.append(
          String.format(
              Locale.ROOT,
              "%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.1f,%.1f,%.1f,%.1f,%.1f,%.4f,%d,%d,%d,%d%n",
              r.policy(),
              r.requests(),
              r.direct(),
              r.seed(),
              r.reseed(),
              r.fallback(),
              r.hitRate(),
              r.ttftP50(),
              r.ttftP90(),
              r.ttftP99(),
              r.e2eP50(),
              r.e2eP99(),
              r.pBusyShare(),
              r.migrations(),
              r.fallbacks(),
              r.workerChanges(),
              r.rejects()));
    }
    return b.toString();
  }

  static String markdown(String title, String command, List<Simulator.Result> rs) {
    StringBuilder b = new StringBuilder("# ").append(title).append("\n\n");
    if (command != null) {
      b.append("```\n").append(command).append("\n```\n\n");
    }
    b.append(
        "| policy | requests | direct | seed | reseed | fallback | hit rate | TTFT p50 ms | TTFT p90 ms "
            + "| TTFT p99 ms | E2E p50 ms | E2E p99 ms | P busy | migrations | fallbacks | worker changes | rejects |\n");
    b.append(
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Simulator.Result r : rs) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f%% | %d | %d | %d | %d |%n",
              r.policy(),
              r.requests(),
              100 * r.direct(),
              100 * r.seed(),
              100 * r.reseed(),
              100 * r.fallback(),
              100 * r.hitRate(),
              r.ttftP50(),
              r.ttftP90(),
              r.ttftP99(),
              r.e2eP50(),
              r.e2eP99(),
              100 * r.pBusyShare(),
              r.migrations(),
              r.fallbacks(),
              r.workerChanges(),
              r.rejects()));
    }
    return b.toString();
  }

  static String table(List<Simulator.Result> rs) {
    StringBuilder b =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "%-13s %8s %7s %7s %7s %8s %7s %9s %9s %9s %9s %9s %7s %6s %6s %7s %7s%n",
                "policy",
                "requests",
                "direct",
                "seed",
                "reseed",
                "fallback",
                "hit",
                "ttft_p50",
                "ttft_p90",
                "ttft_p99",
                "e2e_p50",
                "e2e_p99",
                "p_busy",
                "migr",
                "fallb",
                "changes",
                "rejects"));
    for (Simulator.Result r : rs) {
      b.append(
          String.format(
              Locale.ROOT,
              "%-13s %8d %6.1f%% %6.1f%% %6.1f%% %7.1f%% %6.1f%% %9.0f %9.0f %9.0f %9.0f %9.0f %6.1f%% %6d %6d %7d %7d%n",
              r.policy(),
              r.requests(),
              100 * r.direct(),
              100 * r.seed(),
              100 * r.reseed(),
              100 * r.fallback(),
              100 * r.hitRate(),
              r.ttftP50(),
              r.ttftP90(),
              r.ttftP99(),
              r.e2eP50(),
              r.e2eP99(),
              100 * r.pBusyShare(),
              r.migrations(),
              r.fallbacks(),
              r.workerChanges(),
              r.rejects()));
    }
    return b.toString();
  }
}
