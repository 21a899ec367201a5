package io.kvselect.tools.sim;

import io.kvselect.core.kvc.KvcParams;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The drivers of {@code bin/kvselect-sim} that turn its checked options ({@link SimOptions}) into
 * runs: the workload and the model for a K_d (also {@link MapSweep}'s), and the one run of every
 * {@code --policies} entry that prints the table and writes {@code results.csv},
 * {@code results.md}, {@code requests.csv} ({@code --dump-requests}) and the plots to
 * {@code --out}. Stateless.
 */
final class SimRuns {

  private SimRuns() {}

  /** One run of every policy of {@code cmd}: its table on stdout, its files in {@code --out}. */
  static void one(SimCommand cmd, KvcParams k) throws IOException {
    Workload w = workload(cmd, cmd.kd);
    List<Simulator.Result> rs =
        runAll(cmd, w, config(cmd, cmd.kd, cmd.maxOpenSessions, k), cmd.policies);
    cmd.stdout.print(Report.table(rs));
    Files.writeString(cmd.out.resolve("results.csv"), Report.csv(rs), StandardCharsets.UTF_8);
    Files.writeString(
        cmd.out.resolve("results.md"),
        Report.markdown(
            "kvselect-sim: "
                + w.name()
                + ", seed "
                + cmd.seed
                + ", "
                + w.requests()
                + " requests, "
                + cmd.memoryRule(),
            null,
            rs),
        StandardCharsets.UTF_8);
    if (cmd.dumpRequests) {
      StringBuilder b = new StringBuilder(Simulator.DUMP_HEADER).append('\n');
      for (Simulator.Result r : rs) {
        for (String row : r.dump()) {
          b.append(row).append('\n');
        }
      }
      Files.writeString(cmd.out.resolve("requests.csv"), b.toString(), StandardCharsets.UTF_8);
    }
    if (!cmd.noPlots) {
      Plots.write(cmd.out, rs);
    }
  }

  /** The model of a run of {@code o}: K_d {@code kdTokens}, at most {@code maxOpen} open sessions. */
  static Simulator.Config config(SimOptions o, long kdTokens, int maxOpen, KvcParams k) {
    return new Simulator.Config(
        o.prefillWorkers,
        o.decodeWorkers,
        kdTokens,
        o.slots,
        o.prefillMs,
        o.appendPrefillMs,
        o.transferMs,
        o.decodeMs,
        o.concurrency,
        maxOpen,
        "first-fit".equals(o.dQueue),
        o.releaseOnClose,
        k,
        o.seed,
        Simulator.DecodeReserve.parse(o.decodeReserve));
  }

  /** The workload of {@code o} for one K_d; the flags were checked by {@link SimOptions#errors}. */
  static Workload workload(SimOptions o, long kdTokens) throws IOException {
    long cap = Math.min(o.promptCap, kdTokens - o.outputMax);
    if ("mooncake".equals(o.workload)) {
      return MooncakeWorkload.read(o.trace, cap, o.outputMax, o.traceLimit);
    }
    return AgenticWorkload.generate(
        new AgenticWorkload.Params(
            o.sessions,
            o.requests,
            o.turn0Min,
            o.turn0Max,
            o.appendMin,
            o.appendMax,
            o.outputMin,
            o.outputMax,
            cap,
            o.thinkMinS * 1000,
            o.thinkMaxS * 1000,
            o.startWindowS * 1000,
            o.blockTokens),
        o.seed);
  }

  /** Runs {@code w} under each policy of {@code names}, in order, with progress on stderr. */
  static List<Simulator.Result> runAll(
      SimCommand cmd, Workload w, Simulator.Config cfg, List<String> names) {
    List<Simulator.Result> rs = new ArrayList<>();
    for (String p : names) {
      int total = w.requests();
      rs.add(
          new Simulator(
                  w,
                  cfg,
                  p.trim(),
                  n ->
                      cmd.stderr.printf(
                          Locale.ROOT, "kvselect-sim: %s %d/%d requests%n", p, n, total),
                  cmd.dumpRequests,
                  null)
              .run());
    }
    return rs;
  }
}
