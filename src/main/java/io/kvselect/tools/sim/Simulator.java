package io.kvselect.tools.sim;

import io.kvselect.core.kvc.KvcParams;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * A discrete-event replay of a {@link Workload} over simulated prefill (P) and decode (D) engines,
 * routed by the server's own selection service ({@link SimRouter}: a node's
 * {@code SelectionService} under one policy). The simulator holds no routing or admission rule:
 * each request is a {@code /select_and_reserve} whose answer names the decode worker (and, under
 * {@code kvc}, the mode and the prefill worker); its first token is a {@code prefill_complete}
 * and its end a {@code DELETE} of the booking; every D engine publishes the KV events of its
 * prefix cache ({@link EngineBlocks}), which reach the service's event index through the node's
 * event applier, with no delay.
 *
 * <p>The physical model (every number is a {@link Config} field and a command-line flag):
 * <ul>
 *   <li>A D engine holds at most {@code kdTokens} tokens of KV: idle session caches plus the full
 *       KV (prompt + output) of every request it has reserved memory for. When that memory is
 *       reserved is {@link DecodeReserve}: {@code at-dispatch} (the default; as an engine that
 *       pre-allocates when the request is dispatched, like SGLang's P/D, it holds the memory and a
 *       slot through the prefill queue) or {@code after-prefill} (a request prefilled on P asks
 *       for it when its prefill is done). A request dispatched to run on its session's resident
 *       prefix locks that cache at dispatch. Idle caches are evicted least recently used when a
 *       reservation needs room; a request that does not fit waits ({@code fifo}: the queue's head
 *       blocks the rest; {@code first-fit}: later requests that fit go first).</li>
 *   <li>A D engine runs at most {@code slots} sequences; each decodes one token per
 *       {@code decodeMsPerToken}. A request run on the D engine ("local": Direct, or a baseline
 *       whose prefix is resident there) append-prefills the rest there
 *       ({@code appendPrefillMsPerToken}); otherwise a P engine prefills the whole input
 *       ({@code prefillMsPerToken}, one request at a time, FIFO; P keeps no cache), then the KV
 *       moves to D ({@code transferMsPerToken}).</li>
 *   <li>TTFT is the first decoded token minus the send time; E2E the last token minus the send
 *       time. A client sends at most {@code concurrency} requests at once and keeps at most
 *       {@code maxOpenSessions} sessions open (0: no limit).</li>
 *   <li>When a session's last turn completes the client closes it and every D engine frees its
 *       cache ({@code releaseOnClose}; otherwise it stays until evicted).</li>
 *   <li>{@code kvc} and {@code kvc_refined} register P and D workers and follow the answer's
 *       mode; the baselines register the D workers only (plain P/D disaggregation: the P engine
 *       is taken round-robin) and a request runs locally when its whole prefix is resident on the
 *       chosen D engine.</li>
 * </ul>
 *
 * <p>This class holds the model's parameters and results and wires one run's parts, each its own
 * class: the event queue and clock ({@link SimEventLoop}), the client ({@link SimClient}), the
 * dispatch to the server ({@link SimDispatch}), the engines ({@link SimEngines}) and what is
 * measured ({@link SimTally}).
 *
 * <p>Confined to the calling thread; deterministic for a workload, configuration and seed.
 */
final class Simulator {

  /** Every policy name the constructor accepts. */
  static final List<String> POLICIES =
      List.of("kvc", "kvc_refined", "kv", "sticky", "least_loaded", "round_robin");

  /** When a D engine reserves a request's decode memory (and slot). */
  enum DecodeReserve {
    AT_DISPATCH("at-dispatch"),
    AFTER_PREFILL("after-prefill");

    final String wire;

    DecodeReserve(String wire) {
      this.wire = wire;
    }

    static DecodeReserve parse(String s) {
      for (DecodeReserve d : values()) {
        if (d.wire.equals(s)) {
          return d;
        }
      }
      throw new IllegalArgumentException(
          "--decode-reserve must be at-dispatch or after-prefill, got '" + s + "'");
    }
  }

  /** The model's parameters. */
  record Config(
      int prefillWorkers,
      int decodeWorkers,
      long kdTokens,
      int slots,
      double prefillMsPerToken,
      double appendPrefillMsPerToken,
      double transferMsPerToken,
      double decodeMsPerToken,
      int concurrency,
      int maxOpenSessions,
      boolean firstFit,
      boolean releaseOnClose,
      KvcParams kvc,
      long seed,
      DecodeReserve reserve) {}

  /**
   * What one run measured. Shares are fractions of requests. {@code migrations}: under
   * {@code kvc}, the server's {@code kvselect_kvc_migrations_total} (admissions that moved a
   * session's pin); for a baseline, turns served on another decode worker than the session's
   * previous turn (every baseline request is an admission). {@code fallbacks}: Fallback requests.
   * {@code workerChanges}: turns served on another decode worker than the previous turn, whatever
   * the mode. {@code dump}: one CSV row per request when asked, else null.
   */
  record Result(
      String policy,
      int requests,
      double direct,
      double seed,
      double reseed,
      double fallback,
      double hitRate,
      double ttftP50,
      double ttftP90,
      double ttftP99,
      double e2eP50,
      double e2eP99,
      double pBusyShare,
      long migrations,
      long fallbacks,
      long workerChanges,
      long rejects,
      double[] ttftsSorted,
      long peakDecodeTokens,
      int servedTwice,
      double makespanMs,
      List<String> dump) {}

  /** Header of the {@code --dump-requests} rows. */
  static final String DUMP_HEADER =
      "policy,session,turn,input_tokens,prefix_tokens,output_tokens,decode_worker,"
          + "prefill_worker,mode,local,overlap_blocks,append_tokens,attempts,accounted_tokens,sent_ms,ttft_ms,e2e_ms";

  private final String policy;
  private final boolean kvc;
  private final SimEventLoop loop;
  private final SimRouter router;
  private final SimTally tally;
  private final SimEngines engines;
  private final SimClient client;

  /**
   * @param policy {@code kvc}, {@code kvc_refined} (kvc with the waiting-KV admission
   *     refinement), {@code kv}, {@code sticky}, {@code least_loaded} or {@code round_robin}
   */
  Simulator(Workload w, Config c, String policy, IntConsumer progress) {
    this(w, c, policy, progress, false, null);
  }

  /**
   * @param dumpRequests keep one {@link #DUMP_HEADER} row per request in the result
   * @param ops where every call to the router is reported (a test replays them), or null
   */
  Simulator(
      Workload w,
      Config c,
      String policy,
      IntConsumer progress,
      boolean dumpRequests,
      Consumer<SimRouter.Op> ops) {
    if (!POLICIES.contains(policy)) {
      throw new IllegalArgumentException(
          "unknown policy " + policy + " (" + String.join(", ", POLICIES) + ")");
    }
    this.policy = policy;
    this.kvc = policy.startsWith("kvc");
    KvcParams k = policy.equals("kvc_refined") ? c.kvc().withCountWaiting(true) : c.kvc();
    SimClock clock = new SimClock();
    loop = new SimEventLoop(clock);
    router = new SimRouter(kvc ? "kvc" : policy, k, clock, c.seed(), w.blockTokens(), ops);
    SessionText text = new SessionText(w.sessions().size(), w.blockTokens(), c.seed());
    tally = new SimTally(w, policy, progress, dumpRequests);
    engines = new SimEngines(c, w.blockTokens(), loop, router, text, tally, kvc, this::completed);
    SimDispatch dispatch =
        new SimDispatch(c, policy, w, router, text, engines, tally, dumpRequests);
    client = new SimClient(w, c, loop, engines, dispatch::send);
  }

  /** The engines' end of a request, passed on to the client (created after the engines). */
  private void completed(SimRequest r) {
    client.completed(r);
  }

  Result run() {
    client.start();
    loop.run();
    return result();
  }

  private Result result() {
    tally.checkAllServed();
    if (router.lifecycleMisses() > 0) {
      throw new IllegalStateException(
          router.lifecycleMisses() + " prefill_complete or free calls were refused");
    }
    long rejects = kvc ? router.kvcMetrics().rejectsTotal() : 0;
    long migrations = kvc ? router.kvcMetrics().migrations() : tally.workerChanges();
    return tally.result(migrations, rejects, engines.peak(), loop.now());
  }

  /** Nearest-rank percentile of sorted values. */
  static double pct(double[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int k = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, k - 1))];
  }
}
