// Over 400 lines: one discrete-event model (client, prefill and decode engines with their caches
// and KV events) whose parts share its clock and queues.
package io.kvselect.tools.sim;

import io.kvselect.core.events.KvEvent;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.KvcAnswer;
import io.kvselect.core.kvc.KvcParams;
import io.kvselect.core.service.Selection;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
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

  private static final class Entry {
    final int session;
    final long tokens;
    final long[] blocks;
    final long[] ids;
    int locks;

    Entry(int session, long tokens, long[] blocks, long[] ids) {
      this.session = session;
      this.tokens = tokens;
      this.blocks = blocks;
      this.ids = ids;
    }
  }

  private static final class Req {
    final Workload.Turn turn;
    final double sentMs;
    final String id;
    int[] prompt;
    int d;
    int p = -1;
    boolean local;
    Entry locked;
    long[] held;
    long reused;
    String mode;
    double firstMs;
    String dump;

    Req(Workload.Turn turn, double sentMs) {
      this.turn = turn;
      this.sentMs = sentMs;
      this.id = "s" + turn.session() + "-t" + turn.turn();
    }

    long kv() {
      return turn.inputTokens() + turn.outputTokens();
    }
  }

  private static final class DWorker {
    final WorkerRank rank;
    final EngineBlocks cache;
    final LinkedHashMap<Integer, Entry> entries = new LinkedHashMap<>();
    final List<Req> waiting = new ArrayList<>();
    long entryTokens;
    long activeTokens;
    int running;

    DWorker(WorkerRank rank, int blockTokens) {
      this.rank = rank;
      this.cache = new EngineBlocks(blockTokens);
    }

    long used() {
      return entryTokens + activeTokens;
    }
  }

  private static final class PWorker {
    final ArrayDeque<Req> queue = new ArrayDeque<>();
    boolean busy;
  }

  private record Ev(double t, long seq, Runnable run) {}

  private static final long FIRST_PREFILL_ID = 1;
  private static final long FIRST_DECODE_ID = 100;

  private final Workload w;
  private final Config c;
  private final String policy;
  private final IntConsumer progress;
  private final PriorityQueue<Ev> events =
      new PriorityQueue<>(
          (a, b) -> a.t != b.t ? Double.compare(a.t, b.t) : Long.compare(a.seq, b.seq));
  private long seq;
  private double now;
  private final SimClock clock = new SimClock();
  private final SimRouter router;
  private final SessionText text;
  private final boolean kvc;
  private final boolean dumping;
  private final DWorker[] ds;
  private final PWorker[] ps;
  private long pCursor;

  private int inFlight;
  private int open;
  private final ArrayDeque<Workload.Session> pendingOpen = new ArrayDeque<>();
  private final PriorityQueue<Object[]> ready =
      new PriorityQueue<>(
          (a, b) -> {
            int x = Double.compare((Double) a[0], (Double) b[0]);
            return x != 0 ? x : Long.compare((Long) a[1], (Long) b[1]);
          });
  private final int[] lastD;
  private final int[][] served;

  private final List<Double> ttfts = new ArrayList<>();
  private final List<Double> e2es = new ArrayList<>();
  private final List<String> dump;
  private long nDirect;
  private long nSeed;
  private long nReseed;
  private long nFallback;
  private long nP;
  private long reusedTokens;
  private long inputTokens;
  private long workerChanges;
  private long peak;
  private int servedTwice;
  private int completed;

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
    this.w = w;
    this.c = c;
    this.policy = policy;
    this.progress = progress;
    this.dumping = dumpRequests;
    this.dump = dumpRequests ? new ArrayList<>() : null;
    this.kvc = policy.startsWith("kvc");
    KvcParams k = policy.equals("kvc_refined") ? c.kvc().withCountWaiting(true) : c.kvc();
    router = new SimRouter(kvc ? "kvc" : policy, k, clock, c.seed(), w.blockTokens(), ops);
    text = new SessionText(w.sessions().size(), w.blockTokens(), c.seed());
    ds = new DWorker[c.decodeWorkers()];
    for (int i = 0; i < ds.length; i++) {
      ds[i] =
          new DWorker(router.addWorker(FIRST_DECODE_ID + i, true, c.kdTokens()), w.blockTokens());
    }
    ps = new PWorker[c.prefillWorkers()];
    for (int i = 0; i < ps.length; i++) {
      ps[i] = new PWorker();
      if (kvc) {
        router.addWorker(FIRST_PREFILL_ID + i, false, 0);
      }
    }
    lastD = new int[w.sessions().size()];
    Arrays.fill(lastD, -1);
    served = new int[w.sessions().size()][];
    for (Workload.Session s : w.sessions()) {
      served[s.id()] = new int[s.turns().size()];
    }
  }

  private void at(double t, Runnable r) {
    events.add(new Ev(t, seq++, r));
  }

  Result run() {
    List<Workload.Session> order = new ArrayList<>(w.sessions());
    order.sort(
        (a, b) ->
            a.startMs() != b.startMs()
                ? Double.compare(a.startMs(), b.startMs())
                : Integer.compare(a.id(), b.id()));
    for (Workload.Session s : order) {
      at(s.startMs(), () -> arrive(s));
    }
    while (!events.isEmpty()) {
      Ev e = events.poll();
      now = e.t;
      clock.set(now);
      e.run.run();
    }
    return result();
  }

  // ---- client ----

  private void arrive(Workload.Session s) {
    if (c.maxOpenSessions() > 0 && open >= c.maxOpenSessions()) {
      pendingOpen.add(s);
      return;
    }
    open++;
    ready(s.turns().get(0), now);
  }

  private void ready(Workload.Turn t, double when) {
    double at = Double.isNaN(t.arrivalMs()) ? when : Math.max(when, t.arrivalMs());
    at(
        at,
        () -> {
          ready.add(new Object[] {now, seq++, t});
          pump();
        });
  }

  private void pump() {
    while (inFlight < c.concurrency() && !ready.isEmpty()) {
      Workload.Turn t = (Workload.Turn) ready.poll()[2];
      inFlight++;
      send(new Req(t, now));
    }
  }

  private void completed(Req r) {
    inFlight--;
    Workload.Turn t = r.turn;
    Workload.Session s = w.sessions().get(t.session());
    if (t.turn() + 1 < s.turns().size()) {
      Workload.Turn next = s.turns().get(t.turn() + 1);
      ready(next, now + next.thinkMs());
    } else {
      open--;
      if (c.releaseOnClose()) {
        for (DWorker d : ds) {
          Entry e = d.entries.get(t.session());
          if (e != null && e.locks == 0) {
            evict(d, e);
          }
        }
        for (DWorker d : ds) {
          schedule(d);
        }
      }
      if (!pendingOpen.isEmpty()) {
        Workload.Session n = pendingOpen.poll();
        open++;
        ready(n.turns().get(0), now);
      }
    }
    pump();
  }

  // ---- the engines' view of their caches (not the router's: it learns them from KV events) ----

  /** Tokens of {@code t}'s prefix resident in cache {@code e}. */
  private long overlap(Workload.Turn t, Entry e) {
    if (t.prefixTokens() <= 0 && t.blocks() == null) {
      return 0;
    }
    if (t.blocks() == null || e.blocks == null) {
      return e.session == t.session() ? Math.min(e.tokens, t.prefixTokens()) : 0;
    }
    int n = Math.min(t.blocks().length, e.blocks.length);
    int k = 0;
    while (k < n && t.blocks()[k] == e.blocks[k]) {
      k++;
    }
    return Math.min((long) k * w.blockTokens(), Math.min(e.tokens, t.inputTokens() - 1));
  }

  /** The cache on {@code d} with the most overlap with {@code t} (null when none overlaps). */
  private Entry best(Workload.Turn t, DWorker d) {
    Entry own = d.entries.get(t.session());
    if (t.blocks() == null) {
      return own != null && overlap(t, own) > 0 ? own : null;
    }
    Entry best = null;
    long bo = 0;
    for (Entry e : d.entries.values()) {
      long o = overlap(t, e);
      if (o > bo || (o == bo && o > 0 && e == own)) {
        best = e;
        bo = o;
      }
    }
    return best;
  }

  // ---- routing: the server decides ----

  private void send(Req r) {
    Workload.Turn t = r.turn;
    inputTokens += t.inputTokens();
    r.prompt = text.prompt(t);
    String accounted = dumping ? accounted() : null;
    Selection s = router.selectAndReserve(r.id, t.session(), r.prompt, t.outputTokens());
    int i = (int) (s.workerId() - FIRST_DECODE_ID);
    if (i < 0 || i >= ds.length) {
      throw new IllegalStateException(
          "the router chose worker " + s.workerId() + ", not a decode worker");
    }
    r.d = i;
    Entry be = best(t, ds[i]);
    long ov = be == null ? 0 : overlap(t, be);
    KvcAnswer k = s.kvc();
    if (k != null) {
      r.mode = k.mode();
      switch (r.mode) {
        case "direct" -> nDirect++;
        case "seed" -> nSeed++;
        case "reseed" -> nReseed++;
        default -> nFallback++;
      }
      if ("direct".equals(r.mode) || k.prefill() == null) {
        r.local = true;
        r.locked = "direct".equals(r.mode) ? be : null;
        r.reused = r.locked == null ? 0 : ov;
      } else {
        r.p = (int) (k.prefill().workerId() - FIRST_PREFILL_ID);
      }
    } else if (t.prefixTokens() > 0 && ov >= t.prefixTokens()) {
      r.local = true;
      r.locked = be;
      r.reused = ov;
      r.mode = "direct";
      nDirect++;
    } else {
      r.local = ps.length == 0;
      r.p = ps.length == 0 ? -1 : (int) (pCursor++ % ps.length);
      r.mode = t.turn() == 0 ? "seed" : "reseed";
      if (t.turn() == 0) {
        nSeed++;
      } else {
        nReseed++;
      }
    }
    if (lastD[t.session()] >= 0 && lastD[t.session()] != r.d) {
      workerChanges++;
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
              r.p < 0 ? "-" : Long.toString(FIRST_PREFILL_ID + r.p),
              r.mode,
              r.local,
              s.overlap() == null ? 0 : s.overlap().gpu() / w.blockTokens(),
              k == null ? -1 : k.appendTokens(),
              attempts(k),
              accounted);
    }
    if (!r.local) {
      nP++;
    }
    if (r.local || c.reserve() == DecodeReserve.AT_DISPATCH) {
      if (r.locked != null) {
        r.locked.locks++;
      }
      enqueueD(r);
    } else {
      ps[r.p].queue.add(r);
      startP(ps[r.p]);
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
    for (DWorker d : ds) {
      b.append(b.length() == 0 ? "" : ";")
          .append(d.rank.workerId())
          .append(':')
          .append(router.service().kvcAccount(d.rank));
    }
    return b.toString();
  }

  // ---- prefill workers ----

  private void startP(PWorker p) {
    if (p.busy || p.queue.isEmpty()) {
      return;
    }
    Req r = p.queue.poll();
    p.busy = true;
    at(
        now + r.turn.inputTokens() * c.prefillMsPerToken(),
        () -> {
          p.busy = false;
          if (c.reserve() == DecodeReserve.AT_DISPATCH) {
            decode(ds[r.d], r, r.turn.inputTokens() * c.transferMsPerToken());
          } else {
            enqueueD(r);
          }
          startP(p);
        });
  }

  // ---- decode workers ----

  private void enqueueD(Req r) {
    ds[r.d].waiting.add(r);
    schedule(ds[r.d]);
  }

  /**
   * Tokens {@code r} adds to its D worker when it starts: its whole KV, less its own session's
   * cache that it extends (another session's cache it read a shared prefix from stays where it is).
   */
  private long need(Req r) {
    return r.kv()
        - (r.locked != null && r.locked.session == r.turn.session() ? r.locked.tokens : 0);
  }

  /** Idle tokens {@code r} may evict on {@code d}. */
  private long evictable(DWorker d, Req r) {
    long n = 0;
    for (Entry e : d.entries.values()) {
      if (e.locks == 0 && e != r.locked) {
        n += e.tokens;
      }
    }
    return n;
  }

  private void schedule(DWorker d) {
    boolean started = false;
    for (Iterator<Req> it = d.waiting.iterator(); it.hasNext() && d.running < c.slots(); ) {
      Req r = it.next();
      long need = need(r);
      if (c.kdTokens() - d.used() + evictable(d, r) < need) {
        if (!c.firstFit()) {
          break;
        }
        continue;
      }
      it.remove();
      start(d, r);
      started = true;
    }
    if (!started && d.running == 0 && !d.waiting.isEmpty()) {
      Req head = d.waiting.get(0);
      for (Req q : d.waiting) {
        if (q != head && q.locked != null) {
          q.locked.locks--;
          q.locked = null;
          q.reused = 0;
        }
      }
      long need = need(head);
      if (c.kdTokens() - d.used() + evictable(d, head) < need) {
        throw new IllegalStateException(
            "request of " + head.kv() + " tokens can never fit K_d " + c.kdTokens());
      }
      d.waiting.remove(0);
      start(d, head);
      schedule(d);
    }
  }

  private void evict(DWorker d, Entry e) {
    d.entries.remove(e.session);
    d.entryTokens -= e.tokens;
    router.events(d.rank, d.cache.release(e.ids));
  }

  /** Reserves {@code r}'s memory and slot on {@code d} (the caller checked that it can be made free). */
  private void start(DWorker d, Req r) {
    Entry own = d.entries.get(r.turn.session());
    if (r.locked != null) {
      r.locked.locks--;
      if (r.locked == own) {
        // the request runs on its own cache: the blocks stay cached, held by the request
        d.entries.remove(own.session);
        d.entryTokens -= own.tokens;
        r.held = own.ids;
      }
    } else if (own != null && own.locks == 0) {
      evict(d, own);
    }
    Iterator<Entry> it = d.entries.values().iterator();
    List<KvEvent> evicted = new ArrayList<>();
    while (c.kdTokens() - d.used() < r.kv() && it.hasNext()) {
      Entry e = it.next();
      if (e.locks == 0 && e != r.locked) {
        it.remove();
        d.entryTokens -= e.tokens;
        evicted.addAll(d.cache.release(e.ids));
      }
    }
    router.events(d.rank, evicted);
    d.activeTokens += r.kv();
    r.locked = null;
    d.running++;
    peak = Math.max(peak, d.used());
    if (d.used() > c.kdTokens()) {
      throw new IllegalStateException("decode KV " + d.used() + " above K_d " + c.kdTokens());
    }
    if (r.local) {
      decode(d, r, (r.turn.inputTokens() - r.reused) * c.appendPrefillMsPerToken());
    } else if (c.reserve() == DecodeReserve.AT_DISPATCH) {
      ps[r.p].queue.add(r);
      startP(ps[r.p]);
    } else {
      decode(d, r, r.turn.inputTokens() * c.transferMsPerToken());
    }
  }

  /** {@code r}, holding its memory on {@code d}, decodes after {@code workMs} (append-prefill or KV transfer). */
  private void decode(DWorker d, Req r, double workMs) {
    r.firstMs = now + workMs + c.decodeMsPerToken();
    at(r.firstMs, () -> router.prefillComplete(r.id));
    double finish = r.firstMs + (r.turn.outputTokens() - 1) * c.decodeMsPerToken();
    at(finish, () -> finish(d, r));
  }

  private void finish(DWorker d, Req r) {
    d.activeTokens -= r.kv();
    d.running--;
    Workload.Turn t = r.turn;
    int[] content = text.content(t, r.prompt);
    long[] ids = text.blockIds(t.session(), content);
    List<KvEvent> ev = new ArrayList<>(d.cache.hold(ids, content));
    Entry old = d.entries.remove(t.session());
    if (old != null) {
      d.entryTokens -= old.tokens;
      ev.addAll(d.cache.release(old.ids));
    }
    if (r.held != null) {
      ev.addAll(d.cache.release(r.held));
      r.held = null;
    }
    router.events(d.rank, ev);
    Entry e = new Entry(t.session(), r.kv(), t.blocks(), ids);
    d.entries.put(t.session(), e);
    d.entryTokens += e.tokens;
    router.free(r.id);
    r.prompt = null;
    if (served[t.session()][t.turn()]++ > 0) {
      servedTwice++;
    }
    ttfts.add(r.firstMs - r.sentMs);
    e2es.add(now - r.sentMs);
    if (dumping) {
      dump.add(
          String.format(
              Locale.ROOT,
              "%s,%.1f,%.1f,%.1f",
              r.dump,
              r.sentMs,
              r.firstMs - r.sentMs,
              now - r.sentMs));
    }
    reusedTokens += r.reused;
    if (++completed % 1000 == 0 && progress != null) {
      progress.accept(completed);
    }
    schedule(d);
    completed(r);
  }

  // ---- results ----

  private Result result() {
    int n = ttfts.size();
    double[] tt = ttfts.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    double[] ee = e2es.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    for (int[] s : served) {
      for (int v : s) {
        if (v == 0) {
          throw new IllegalStateException("a request was never served");
        }
      }
    }
    if (router.lifecycleMisses() > 0) {
      throw new IllegalStateException(
          router.lifecycleMisses() + " prefill_complete or free calls were refused");
    }
    long rejects = kvc ? router.kvcMetrics().rejectsTotal() : 0;
    long migrations = kvc ? router.kvcMetrics().migrations() : workerChanges;
    double dn = Math.max(1, n);
    return new Result(
        policy,
        n,
        nDirect / dn,
        nSeed / dn,
        nReseed / dn,
        nFallback / dn,
        inputTokens == 0 ? 0 : (double) reusedTokens / inputTokens,
        pct(tt, 50),
        pct(tt, 90),
        pct(tt, 99),
        pct(ee, 50),
        pct(ee, 99),
        nP / dn,
        migrations,
        nFallback,
        workerChanges,
        rejects,
        tt,
        peak,
        servedTwice,
        now,
        dump == null ? null : List.copyOf(dump));
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
