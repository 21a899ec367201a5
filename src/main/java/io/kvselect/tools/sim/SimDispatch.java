package io.kvselect.tools.sim;

import io.kvselect.core.kvc.KvcAnswer;
import io.kvselect.core.service.Selection;
import java.util.Arrays;
import java.util.Locale;

/**
 * The bridge from the simulated client to the server's decision: a sent request becomes a
 * {@code /select_and_reserve} ({@link SimRouter}) whose answer names its decode worker and, under
 * {@code kvc}, its mode and prefill worker; a baseline's request runs locally when its whole
 * prefix is resident on the chosen D engine, and otherwise is prefilled on a P engine taken
 * round-robin. The request then goes to its engines ({@link SimEngines}), its mode and worker
 * change to the {@link SimTally}, and under {@code --dump-requests} its decision row to the request.
 *
 * <p>Mutable (the round-robin cursor, each session's last decode worker); owned by one
 * {@link Simulator} and confined to its thread.
 */
final class SimDispatch {

  private final Simulator.Config c;
  private final String policy;
  private final int blockTokens;
  private final SimRouter router;
  private final SessionText text;
  private final SimEngines engines;
  private final SimTally tally;
  private final boolean dumping;
  private final int[] lastD;
  private long pCursor;

  SimDispatch(
      Simulator.Config c,
      String policy,
      Workload w,
      SimRouter router,
      SessionText text,
      SimEngines engines,
      SimTally tally,
      boolean dumping) {
    this.c = c;
    this.policy = policy;
    this.blockTokens = w.blockTokens();
    this.router = router;
    this.text = text;
    this.engines = engines;
    this.tally = tally;
    this.dumping = dumping;
    lastD = new int[w.sessions().size()];
    Arrays.fill(lastD, -1);
  }

  /** Asks the server where {@code r} goes and hands it to its engines. */
  void send(SimRequest r) {
    Workload.Turn t = r.turn;
    tally.sent(t.inputTokens());
    r.prompt = text.prompt(t);
    String accounted = dumping ? accounted() : null;
    Selection s = router.selectAndReserve(r.id, t.session(), r.prompt, t.outputTokens());
    int i = (int) (s.workerId() - SimEngines.FIRST_DECODE_ID);
    if (i < 0 || i >= engines.decodeWorkers()) {
      throw new IllegalStateException(
          "the router chose worker " + s.workerId() + ", not a decode worker");
    }
    r.d = i;
    SimEngines.Entry be = engines.best(t, i);
    long ov = be == null ? 0 : engines.overlap(t, be);
    int prefillWorkers = engines.prefillWorkers();
    KvcAnswer k = s.kvc();
    if (k != null) {
      r.mode = k.mode();
      tally.mode(r.mode);
      if ("direct".equals(r.mode) || k.prefill() == null) {
        r.local = true;
        r.locked = "direct".equals(r.mode) ? be : null;
        r.reused = r.locked == null ? 0 : ov;
      } else {
        r.p = (int) (k.prefill().workerId() - SimEngines.FIRST_PREFILL_ID);
      }
    } else if (t.prefixTokens() > 0 && ov >= t.prefixTokens()) {
      r.local = true;
      r.locked = be;
      r.reused = ov;
      r.mode = "direct";
      tally.mode(r.mode);
    } else {
      r.local = prefillWorkers == 0;
      r.p = prefillWorkers == 0 ? -1 : (int) (pCursor++ % prefillWorkers);
      r.mode = t.turn() == 0 ? "seed" : "reseed";
      tally.mode(r.mode);
    }
    if (lastD[t.session()] >= 0 && lastD[t.session()] != r.d) {
      tally.workerChange();
    }
    lastD[t.session()] = r.d;
    if (dumping) {
      r.dump =
          String.format(
              Locale.ROOT,
              "%s,%d,%d,%d,%d,%d,%d,%s,%s,%b,%d,%d,%s,%s",
              policy,
              t.session(),
              t.turn(),
              t.inputTokens(),
              t.prefixTokens(),
              t.outputTokens(),
              s.workerId(),
              r.p < 0 ? "-" : Long.toString(SimEngines.FIRST_PREFILL_ID + r.p),
              r.mode,
              r.local,
              s.overlap() == null ? 0 : s.overlap().gpu() / blockTokens,
              k == null ? -1 : k.appendTokens(),
              attempts(k),
              accounted);
    }
    if (!r.local) {
      tally.prefilled();
    }
    if (r.local || c.reserve() == Simulator.DecodeReserve.AT_DISPATCH) {
      if (r.locked != null) {
        r.locked.locks++;
      }
      engines.enqueueD(r);
    } else {
      engines.prefill(r);
    }
  }

  /** The rejected probes of a kvc answer, {@code worker:reason} joined by {@code ;}. */
  private static String attempts(KvcAnswer k) {
    if (k == null || k.attempts().isEmpty()) {
      return "-";
    }
    StringBuilder b = new StringBuilder();
    for (KvcAnswer.Probe p : k.attempts()) {
      b.append(b.length() == 0 ? "" : ";").append(p.workerId()).append(':').append(p.reason());
    }
    return b.toString();
  }

  /** What the router's admission model accounts on every decode worker before the decision. */
  private String accounted() {
    StringBuilder b = new StringBuilder();
    for (int d = 0; d < engines.decodeWorkers(); d++) {
      b.append(b.length() == 0 ? "" : ";")
          .append(engines.rank(d).workerId())
          .append(':')
          .append(router.service().kvcAccount(engines.rank(d)));
    }
    return b.toString();
  }
}
