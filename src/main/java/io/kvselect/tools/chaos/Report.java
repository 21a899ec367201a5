package io.kvselect.tools.chaos;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/** The Markdown the harness prints: one table per phase and a summary with one row per phase. Stateless. */
final class Report {

  private Report() {}

  /** The table of one phase, under a {@code ### phase N: name} heading. */
  static void phase(PrintStream out, int number, PhaseResult r) {
    out.printf("### phase %d: %s%n%n", number, r.name());
    out.println("| measure | value |");
    out.println("|---|---|");
    row(out, "fault", r.fault());
    if (r.skipped() != null) {
      row(out, "result", "skipped: " + r.skipped());
      out.println();
      return;
    }
    row(out, "load seconds", String.format(Locale.ROOT, "%.1f", r.loadSecs()));
    row(out, "lifecycles completed", Long.toString(r.lifecycles()));
    row(out, "lifecycles per second", String.format(Locale.ROOT, "%.1f", r.lifecyclesPerSec()));
    row(out, "non-2xx and timeouts", CallCounts.format(r.failures()));
    r.samples()
        .forEach(
            (kind, body) ->
                row(out, "first answer of " + kind, "`" + body.replace('`', '\'') + "`"));
    row(out, "select_and_reserve p50 / p99 / max ms, whole phase", r.latency().cell());
    row(
        out,
        "select_and_reserve p50 / p99 / max ms, fault window after its first 5 s",
        r.window() == null ? "no fault" : windowCell(r.window()));
    row(out, "binding moves", r.moves() + " of " + r.turns() + " repeat turns");
    row(
        out,
        "sessions on one worker on every node (POST /select), within 10 s of the undo",
        r.bindings());
    row(out, "active bookings per node when the load stopped", r.activeAtStop());
    row(
        out,
        "selections clients could not settle (no answer), freed after the load: last answer",
        r.unsettledCell());
    row(
        out,
        "leaked bookings after the phase",
        r.leaked() + String.format(Locale.ROOT, " (drain %.1f s)", r.drainSecs()));
    row(
        out,
        "DELETEs that answered 404 for a booking of the same lifecycle, retried after the leak check: last"
            + " answer",
        r.deniedCell());
    if (r.leakedAfterRetry() != null) {
      row(out, "leaked bookings after those retries", r.leakedAfterRetry());
    }
    row(out, "catalog agreement (GET /workers)", r.catalog());
    row(out, "fallbacks used (kvselect_cluster_fallbacks_total)", r.fallbacks());
    row(out, "members seen per node (GET /cluster)", r.members());
    if (!r.notes().isEmpty()) {
      row(out, "notes", r.notes());
    }
    out.println();
  }

  /** One row per phase with the figures that compare across phases. */
  static void summary(PrintStream out, List<PhaseResult> results) {
    out.println("### summary");
    out.println();
    out.println(
        "| phase | lifecycles | per s | timeouts | other non-2xx | select p50 / p99 / max ms | fault window"
            + " after 5 s | moves | bindings agreed | leaked | catalogs | fallbacks | members |");
    out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (PhaseResult r : results) {
      if (r.skipped() != null) {
        out.printf("| %s | skipped: %s | | | | | | | | | | | |%n", r.name(), cell(r.skipped()));
        continue;
      }
      long timeouts = CallCounts.total(r.failures(), CallCounts.TIMEOUT);
      long all =
          r.failures().values().stream()
              .flatMap(m -> m.values().stream())
              .mapToLong(Long::longValue)
              .sum();
      out.printf(
          Locale.ROOT,
          "| %s | %d | %.1f | %d | %d | %s | %s | %d | %s | %s | %s | %s | %s |%n",
          r.name(),
          r.lifecycles(),
          r.lifecyclesPerSec(),
          timeouts,
          all - timeouts,
          r.latency().cell(),
          r.window() == null ? "—" : windowCell(r.window()),
          r.moves(),
          cell(agreedCell(r.bindings())),
          cell(leakedCell(r)),
          cell(r.catalog()),
          r.fallbacks(),
          r.members());
    }
    out.println();
  }

  /**
   * The summary's short form of the bindings cell: {@code 200 of 200}, with when they were
   * compared after the undo ({@code 200 of 200 at 6.1 s}), without the samples.
   */
  static String agreedCell(String bindings) {
    int on = bindings.indexOf(" on all ");
    if (on < 0) {
      return bindings;
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(", ([0-9.]+) s after the undo").matcher(bindings);
    return bindings.substring(0, on) + (m.find() ? " at " + m.group(1) + " s" : "");
  }

  /** The leak, and what was left of it after the 404'd DELETEs were retried. */
  static String leakedCell(PhaseResult r) {
    if (r.leakedAfterRetry() == null) {
      return r.leaked();
    }
    long n = r.denied().values().stream().mapToLong(Long::longValue).sum();
    return r.leaked()
        + " (after retrying "
        + n
        + " DELETEs that had answered 404: "
        + r.leakedAfterRetry()
        + ")";
  }

  /** A fault window in which no client started a call (every thread stalled) says so rather than a dash. */
  static String windowCell(Latency w) {
    return w.count() == 0 ? "no call started in it" : w.cell();
  }

  private static void row(PrintStream out, String measure, String value) {
    out.printf("| %s | %s |%n", measure, cell(value));
  }

  /** A table cell: pipes escaped, line breaks flattened. */
  static String cell(String s) {
    return s.replace("|", "\\|").replace('\n', ' ');
  }
}
