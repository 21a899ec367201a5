package io.kvselect.tools.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.IntConsumer;

/**
 * What a run measures as it goes, and the {@link Simulator.Result} it adds up to: the mode of
 * every decision and the requests prefilled on P ({@link SimDispatch}), every served request's
 * TTFT and E2E, reused tokens, how many times each turn was served and the {@code --dump-requests}
 * rows ({@link SimEngines}, when a request finishes), with a progress report every 1,000 requests.
 *
 * <p>Mutable; owned by one {@link Simulator} and confined to its thread.
 */
final class SimTally {

  private final String policy;
  private final IntConsumer progress;
  private final List<String> dump;
  private final int[][] served;
  private final List<Double> ttfts = new ArrayList<>();
  private final List<Double> e2es = new ArrayList<>();
  private long nDirect;
  private long nSeed;
  private long nReseed;
  private long nFallback;
  private long nP;
  private long reusedTokens;
  private long inputTokens;
  private long workerChanges;
  private int servedTwice;
  private int completed;

  /**
   * @param progress told the count of finished requests every 1,000, or null
   * @param dumping keep one {@link Simulator#DUMP_HEADER} row per request
   */
  SimTally(Workload w, String policy, IntConsumer progress, boolean dumping) {
    this.policy = policy;
    this.progress = progress;
    this.dump = dumping ? new ArrayList<>() : null;
    served = new int[w.sessions().size()][];
    for (Workload.Session s : w.sessions()) {
      served[s.id()] = new int[s.turns().size()];
    }
  }

  /** A request of {@code tokens} input tokens was sent. */
  void sent(long tokens) {
    inputTokens += tokens;
  }

  /** A decision's mode: {@code direct}, {@code seed}, {@code reseed}, else a Fallback. */
  void mode(String mode) {
    switch (mode) {
      case "direct" -> nDirect++;
      case "seed" -> nSeed++;
      case "reseed" -> nReseed++;
      default -> nFallback++;
    }
  }

  /** A request is prefilled on a P engine. */
  void prefilled() {
    nP++;
  }

  /** A turn is served on another decode worker than its session's previous turn. */
  void workerChange() {
    workerChanges++;
  }

  long workerChanges() {
    return workerChanges;
  }

  /** {@code r} got its last token at {@code nowMs}. */
  void served(SimRequest r, double nowMs) {
    Workload.Turn t = r.turn;
    if (served[t.session()][t.turn()]++ > 0) {
      servedTwice++;
    }
    ttfts.add(r.firstMs - r.sentMs);
    e2es.add(nowMs - r.sentMs);
    if (dump != null) {
      dump.add(
          String.format(
              Locale.ROOT,
              "%s,%.1f,%.1f,%.1f",
              r.dump,
              r.sentMs,
              r.firstMs - r.sentMs,
              nowMs - r.sentMs));
    }
    reusedTokens += r.reused;
    if (++completed % 1000 == 0 && progress != null) {
      progress.accept(completed);
    }
  }

  /** Throws unless every turn of the workload was served. */
  void checkAllServed() {
    for (int[] s : served) {
      for (int v : s) {
        if (v == 0) {
          throw new IllegalStateException("a request was never served");
        }
      }
    }
  }

  /** The run's result, with what the tally cannot know itself. */
  Simulator.Result result(long migrations, long rejects, long peakDecodeTokens, double makespanMs) {
    int n = ttfts.size();
    double[] tt = ttfts.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    double[] ee = e2es.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    double dn = Math.max(1, n);
    return new Simulator.Result(
        policy,
        n,
        nDirect / dn,
        nSeed / dn,
        nReseed / dn,
        nFallback / dn,
        inputTokens == 0 ? 0 : (double) reusedTokens / inputTokens,
        Simulator.pct(tt, 50),
        Simulator.pct(tt, 90),
        Simulator.pct(tt, 99),
        Simulator.pct(ee, 50),
        Simulator.pct(ee, 99),
        nP / dn,
        migrations,
        nFallback,
        workerChanges,
        rejects,
        tt,
        peakDecodeTokens,
        servedTwice,
        makespanMs,
        dump == null ? null : List.copyOf(dump));
  }
}
