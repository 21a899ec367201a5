package io.kvselect.tools.loadgen;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * The Markdown report of a {@link QueueLoad} run: the set-up (command, commit, machine, node,
 * fleet, prompts, load), the outcomes (200, 429 by {@code limit_kind}, other) with their latency
 * percentiles, the {@code /loads} pending counts and the node's {@code kvselect_router_queue_wait}
 * counts. Stateless.
 */
final class QueueLoadReport {

  private QueueLoadReport() {}

  /** Prints the Markdown report of {@code r}, a run of {@code o}. */
  static void print(PrintStream out, QueueLoad o, QueueLoad.Result r) {
    QueueLoadStats s = r.stats();
    out.printf("### kvselect-queueload at %s req/s%n%n", fmt(o.rate));
    out.printf("- command: `%s`%n", QueueLoad.invocation);
    out.printf("- commit: %s%n", BenchEnv.gitCommit());
    out.printf(
        "- machine: %d CPUs (nproc), %s; load average %.2f at the end%n",
        BenchEnv.cpus(), BenchEnv.cpuModel(), BenchEnv.loadAverage());
    out.printf("- java: %s%n", BenchEnv.javaVersion());
    out.printf(
        "- node: %s%s%n",
        r.target(),
        o.url == null
            ? String.format(
                Locale.ROOT,
                ", approximate mode "
                    + "(DYN_ROUTER_USE_KV_EVENTS=false), DYN_ROUTER_QUEUE_THRESHOLD=%s, queue timeout %s s",
                o.threshold,
                fmt(o.queueTimeoutSecs))
            : " (its own queue settings)");
    out.printf(
        "- fleet: %s; each prefills %s tokens/s, one request after another, then decodes %d ms%n",
        o.register
            ? o.workers
                + " simulated workers, max_num_batched_tokens "
                + o.batchTokens
                + ", block size "
                + QueueLoad.BLOCK_SIZE
            : "the target's workers",
        fmt(o.prefillTokensPerSec),
        o.decodeMs);
    out.printf(
        "- prompts: %d tokens (%d shared with one of %d prefixes), %d pre-encoded bodies of about %d bytes%s%n",
        o.isl,
        r.prefixTokens(),
        o.prefixGroups,
        o.bodies(),
        r.meanBodyBytes(),
        o.bodies() < r.sent()
            ? " (request i sends body i mod "
                + o.bodies()
                + ": a repeated body may be cached whole)"
            : ", one per request");
    if (o.register) {
      out.printf(
          "- prefill capacity: about %s req/s with no cached prefix, %s req/s with every shared prefix cached%n",
          fmt(o.workers * o.prefillTokensPerSec / o.isl),
          fmt(o.workers * o.prefillTokensPerSec / Math.max(1, o.isl - r.prefixTokens())));
    }
    out.printf(
        "- load: open loop, %s req/s for %s s (%d requests, %d event loops), latency from each request's "
            + "intended send time; largest send lag %.1f ms; requests unfinished at the end: %d%s%n%n",
        fmt(o.rate),
        fmt(r.sendSeconds()),
        r.sent(),
        o.eventLoops,
        s.maxSendLagMicros / 1e3,
        r.unfinished(),
        r.unfinished() == 0 ? "" : " (by the step they stopped in: " + r.unfinishedBySteps() + ")");
    out.println("| outcome | requests | share of sent | p50 ms | p99 ms | max ms |");
    out.println("|---|---|---|---|---|---|");
    row(out, "200 served", s.served, r.sent());
    for (String kind : List.of("timeout", "requests", "isl_tokens")) {
      Histogram h = s.rejectedByKind.get(kind);
      row(out, "429 `" + kind + "`", h == null ? new Histogram(1) : h, r.sent());
    }
    s.rejectedByKind.forEach(
        (kind, h) -> {
          if (!List.of("timeout", "requests", "isl_tokens").contains(kind)) {
            row(out, "429 `" + kind + "`", h, r.sent());
          }
        });
    row(out, "all 429", s.rejected, r.sent());
    out.printf(
        Locale.ROOT,
        "| other | %d | %.1f%% | | | |%n%n",
        s.otherCount(),
        pct(s.otherCount(), r.sent()));
    if (!s.other.isEmpty()) {
      out.printf("Other outcomes: %s%n%n", s.other);
    }
    if (s.prefillCompleteErrors + s.freeErrors > 0) {
      out.printf(
          "Engine calls that failed: %d prefill_complete, %d free%n%n",
          s.prefillCompleteErrors, s.freeErrors);
    }
    out.printf("| `/loads` pending_count (every 100 ms while sending) | max | mean | samples |%n");
    out.println("|---|---|---|---|");
    out.printf(
        "| all partitions | %d | %.1f | %d |%n%n",
        r.pendingMax(), r.pendingMean(), r.pendingSamples());
    out.println(
        "| `kvselect_router_queue_wait` outcome (node, over the run) | count | mean wait ms |");
    out.println("|---|---|---|");
    if (r.queueWaits().isEmpty()) {
      out.println("| (no request waited) | 0 | |");
    }
    r.queueWaits()
        .forEach(
            (k, w) ->
                out.printf(
                    Locale.ROOT,
                    "| %s | %d | %s |%n",
                    k,
                    w.count(),
                    w.count() == 0
                        ? ""
                        : String.format(Locale.ROOT, "%.1f", w.seconds() * 1e3 / w.count())));
    out.println();
  }

  private static void row(PrintStream out, String what, Histogram h, long sent) {
    long n = h.getTotalCount();
    if (n == 0) {
      out.printf("| %s | 0 | 0%% | | | |%n", what);
      return;
    }
    out.printf(
        Locale.ROOT,
        "| %s | %d | %.1f%% | %.1f | %.1f | %.1f |%n",
        what,
        n,
        pct(n, sent),
        h.getValueAtPercentile(50) / 1e3,
        h.getValueAtPercentile(99) / 1e3,
        h.getMaxValue() / 1e3);
  }

  private static double pct(long n, long of) {
    return of == 0 ? 0 : 100.0 * n / of;
  }

  private static String fmt(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15
        ? String.format(Locale.ROOT, "%,d", (long) v)
        : String.format(Locale.ROOT, "%,.2f", v);
  }
}
