// Over 400 lines: one discrete-event model (sessions, prefill and decode engines, the policies) whose parts share its clock and queues.
package io.kvselect.tools.sim;

import io.kvselect.core.config.PolicySettings;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.KvcDispatcher;
import io.kvselect.core.kvc.KvcMode;
import io.kvselect.core.kvc.KvcOutcome;
import io.kvselect.core.kvc.KvcParams;
import io.kvselect.core.kvc.KvcRequest;
import io.kvselect.core.kvc.LocalKvcState;
import io.kvselect.core.kvc.ResidentModel;
import io.kvselect.core.select.Candidate;
import io.kvselect.core.select.CostRequest;
import io.kvselect.core.select.KvCostPolicy;
import io.kvselect.core.select.LeastLoadedPolicy;
import io.kvselect.core.select.PolicyContext;
import io.kvselect.core.select.RoundRobinPolicy;
import io.kvselect.core.select.SelectionPolicy;
import io.kvselect.core.select.StickyPolicy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.function.IntConsumer;

/**
 * A discrete-event replay of a {@link Workload} through one selection policy of the real core
 * ({@link KvcDispatcher} with the built-in {@link ResidentModel} for {@code kvc}; the
 * {@link SelectionPolicy} implementations for the others) over simulated prefill (P) and decode
 * (D) workers.
 *
 * <p>The physical model (every number is a {@link Config} field and a command-line flag):
 * <ul>
 *   <li>A D worker holds at most {@code kdTokens} tokens of KV: idle session caches plus the full
 *       KV (prompt + output) of every request it runs, reserved when the request starts. A
 *       request dispatched to run on its session's resident prefix locks that cache at dispatch,
 *       so the KV of waiting requests counts too. Idle caches are evicted least recently used
 *       when a starting request needs room; a request that does not fit waits ({@code fifo}: the
 *       queue's head blocks the rest; {@code first-fit}: later requests that fit start).</li>
 *   <li>A D worker runs at most {@code slots} sequences; each decodes one token per
 *       {@code decodeMsPerToken}. A request whose prefix is resident on its D worker
 *       append-prefills the rest there ({@code appendPrefillMsPerToken}); otherwise a P worker
 *       prefills the whole input ({@code prefillMsPerToken}, one request at a time, FIFO; P keeps
 *       no cache), then the D worker reserves memory and a slot and receives the KV
 *       ({@code transferMsPerToken}).</li>
 *   <li>TTFT is the first decoded token minus the send time; E2E the last token minus the send
 *       time. A client sends at most {@code concurrency} requests at once and keeps at most
 *       {@code maxOpenSessions} sessions open (0: no limit).</li>
 *   <li>When a session's last turn completes the client closes it and every D worker frees its
 *       cache ({@code releaseOnClose}; otherwise it stays until evicted).</li>
 *   <li>Baseline policies choose a D worker; a request runs there on its resident prefix when it
 *       is there ("direct"), else through round-robin P. {@code kvc} decides the path itself.</li>
 * </ul>
 *
 * <p>Confined to the calling thread; deterministic for a workload, configuration and seed.
 */
final class Simulator {

  /** Every policy name the constructor accepts. */
  static final List<String> POLICIES = List.of("kvc", "kvc_refined", "kv", "sticky", "least_loaded", "round_robin");

  /** The model's parameters. */
  record Config(int prefillWorkers, int decodeWorkers, long kdTokens, int slots, double prefillMsPerToken,
      double appendPrefillMsPerToken, double transferMsPerToken, double decodeMsPerToken, int concurrency,
      int maxOpenSessions, boolean firstFit, boolean releaseOnClose, KvcParams kvc, long seed) {}

  /** What one run measured. Shares are fractions of requests. */
  record Result(String policy, int requests, double direct, double seed, double reseed, double fallback,
      double hitRate, double ttftP50, double ttftP90, double ttftP99, double e2eP50, double e2eP99,
      double pBusyShare, long migrations, long rejects, double[] ttftsSorted, long peakDecodeTokens,
      int servedTwice, double makespanMs) {}

  private static final class Entry {
    final int session;
    final long tokens;
    final long[] blocks;
    int locks;

    Entry(int session, long tokens, long[] blocks) {
      this.session = session;
      this.tokens = tokens;
      this.blocks = blocks;
    }
  }

  private static final class Req {
    final Workload.Turn turn;
    final double sentMs;
    int d;
    int p = -1;
    boolean local;
    Entry locked;
    long reused;
    String mode;
    long promised;
    double firstMs;

    Req(Workload.Turn turn, double sentMs) {
      this.turn = turn;
      this.sentMs = sentMs;
    }

    long kv() {
      return turn.inputTokens() + turn.outputTokens();
    }
  }

  private static final class DWorker {
    final WorkerRank rank;
    final LinkedHashMap<Integer, Entry> entries = new LinkedHashMap<>();
    final List<Req> waiting = new ArrayList<>();
    long entryTokens;
    long activeTokens;
    int running;

    DWorker(WorkerRank rank) {
      this.rank = rank;
    }

    long used() {
      return entryTokens + activeTokens;
    }
  }

  private static final class PWorker {
    final WorkerRank rank;
    final ArrayDeque<Req> queue = new ArrayDeque<>();
    boolean busy;

    PWorker(WorkerRank rank) {
      this.rank = rank;
    }
  }

  private record Ev(double t, long seq, Runnable run) {}

  private final Workload w;
  private final Config c;
  private final String policy;
  private final IntConsumer progress;
  private final PriorityQueue<Ev> events = new PriorityQueue<>((a, b) -> a.t != b.t ? Double.compare(a.t, b.t)
      : Long.compare(a.seq, b.seq));
  private long seq;
  private double now;
  private final DWorker[] ds;
  private final PWorker[] ps;
  private final List<WorkerRank> dRanks = new ArrayList<>();
  private final List<WorkerRank> pRanks = new ArrayList<>();
  private long pCursor;

  private final SelectionPolicy baseline;
  private final KvcDispatcher kvc;
  private final KvcParams kvcParams;
  private final ResidentModel model = new ResidentModel();
  private final RouterConfig routerConfig;
  private final Random rng;

  private int inFlight;
  private int open;
  private final ArrayDeque<Workload.Session> pendingOpen = new ArrayDeque<>();
  private final PriorityQueue<Object[]> ready = new PriorityQueue<>((a, b) -> {
    int x = Double.compare((Double) a[0], (Double) b[0]);
    return x != 0 ? x : Long.compare((Long) a[1], (Long) b[1]);
  });
  private final int[] lastD;
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
  private long migrations;
  private long peak;
  private int servedTwice;
  private int completed;

  /**
   * @param policy {@code kvc}, {@code kvc_refined} (kvc with the waiting-KV admission
   *     refinement), {@code kv}, {@code sticky}, {@code least_loaded} or {@code round_robin}
   */
  Simulator(Workload w, Config c, String policy, IntConsumer progress) {
    this.w = w;
    this.c = c;
    this.policy = policy;
    this.progress = progress;
    this.rng = new Random(c.seed());
    ds = new DWorker[c.decodeWorkers()];
    for (int i = 0; i < ds.length; i++) {
      ds[i] = new DWorker(new WorkerRank(100 + i, 0));
      dRanks.add(ds[i].rank);
    }
    ps = new PWorker[c.prefillWorkers()];
    for (int i = 0; i < ps.length; i++) {
      ps[i] = new PWorker(new WorkerRank(1 + i, 0));
      pRanks.add(ps[i].rank);
    }
    boolean isKvc = policy.equals("kvc") || policy.equals("kvc_refined");
    kvcParams = policy.equals("kvc_refined") ? c.kvc().withCountWaiting(true) : c.kvc();
    kvc = isKvc ? new KvcDispatcher(new LocalKvcState()) : null;
    baseline = switch (policy) {
      case "kvc", "kvc_refined" -> null;
      case "kv" -> new KvCostPolicy();
      case "sticky" -> new StickyPolicy();
      case "least_loaded" -> new LeastLoadedPolicy();
      case "round_robin" -> new RoundRobinPolicy();
      default -> throw new IllegalArgumentException("unknown policy " + policy + " (" + String.join(", ", POLICIES)
          + ")");
    };
    String cfgName = isKvc ? "kvc" : policy;
    routerConfig = RouterConfig.DEFAULTS.withSelectionPolicy(PolicySettings.defaults().withName(cfgName)
        .withKvc(kvcParams));
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
    order.sort((a, b) -> a.startMs() != b.startMs() ? Double.compare(a.startMs(), b.startMs())
        : Integer.compare(a.id(), b.id()));
    for (Workload.Session s : order) {
      at(s.startMs(), () -> arrive(s));
    }
    while (!events.isEmpty()) {
      Ev e = events.poll();
      now = e.t;
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
    at(at, () -> {
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

  // ---- routing ----

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

  private void send(Req r) {
    Workload.Turn t = r.turn;
    inputTokens += t.inputTokens();
    long[] ov = new long[ds.length];
    Entry[] bestE = new Entry[ds.length];
    for (int i = 0; i < ds.length; i++) {
      bestE[i] = best(t, ds[i]);
      ov[i] = bestE[i] == null ? 0 : overlap(t, bestE[i]);
    }
    if (kvc != null) {
      routeKvc(r, ov, bestE);
    } else {
      routeBaseline(r, ov, bestE);
    }
    if (lastD[t.session()] >= 0 && lastD[t.session()] != r.d) {
      migrations++;
    }
    lastD[t.session()] = r.d;
    if (r.local) {
      if (r.locked != null) {
        r.locked.locks++;
      }
      enqueueD(r);
    } else {
      nP++;
      ps[r.p].queue.add(r);
      startP(ps[r.p]);
    }
  }

  private void routeBaseline(Req r, long[] ov, Entry[] bestE) {
    Workload.Turn t = r.turn;
    int bt = w.blockTokens();
    List<Candidate> cands = new ArrayList<>(ds.length);
    for (int i = 0; i < ds.length; i++) {
      DWorker d = ds[i];
      long pending = 0;
      for (Req q : d.waiting) {
        pending += q.local ? q.turn.inputTokens() - q.reused : 0;
      }
      cands.add(new Candidate(d.rank, new RankOverlap((int) Math.min(Integer.MAX_VALUE, ov[i] / bt), 0, 0, 0), true,
          pending, (d.activeTokens + t.inputTokens()) / bt, d.running + d.waiting.size(), 0));
    }
    CostRequest cost = new CostRequest(bt, t.inputTokens(), true, false);
    int i = baseline.choose(cands, new PolicyContext(routerConfig, cost, rng, "s" + t.session()));
    r.d = i;
    if (t.prefixTokens() > 0 && ov[i] >= t.prefixTokens()) {
      r.local = true;
      r.locked = bestE[i];
      r.reused = ov[i];
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
  }

  private void routeKvc(Req r, long[] ov, Entry[] bestE) {
    Workload.Turn t = r.turn;
    String session = "s" + t.session();
    long bestOv = 0;
    for (long o : ov) {
      bestOv = Math.max(bestOv, o);
    }
    long append = Math.max(0, t.inputTokens() - bestOv);
    KvcRequest kr = new KvcRequest(session, t.turn(), t.inputTokens(), append);
    int bt = w.blockTokens();
    KvcOutcome o = kvc.dispatch("sim", kr, kvcParams, dRanks, rank -> ov[index(rank)] / bt,
        rank -> model.used(rank) + model.waitingTokens(rank), pRanks,
        model.admission(rank -> c.kdTokens(), kvcParams), true).toCompletableFuture().join();
    int i = index(o.decode());
    r.d = i;
    r.mode = o.mode().wire();
    switch (o.mode()) {
      case DIRECT -> nDirect++;
      case SEED -> nSeed++;
      case RESEED -> nReseed++;
      case FALLBACK -> nFallback++;
    }
    if (o.mode() == KvcMode.DIRECT || o.prefill() == null) {
      r.local = true;
      r.locked = o.mode() == KvcMode.DIRECT ? bestE[i] : null;
      r.reused = r.locked == null ? 0 : ov[i];
    } else {
      r.p = pRanks.indexOf(o.prefill());
    }
    r.promised = r.kv();
    model.addWaiting(ds[i].rank, r.promised);
  }

  private int index(WorkerRank rank) {
    return (int) (rank.workerId() - 100);
  }

  // ---- prefill workers ----

  private void startP(PWorker p) {
    if (p.busy || p.queue.isEmpty()) {
      return;
    }
    Req r = p.queue.poll();
    p.busy = true;
    at(now + r.turn.inputTokens() * c.prefillMsPerToken(), () -> {
      p.busy = false;
      enqueueD(r);
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
    return r.kv() - (r.locked != null && r.locked.session == r.turn.session() ? r.locked.tokens : 0);
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
      start(d, r, need);
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
        throw new IllegalStateException("request of " + head.kv() + " tokens can never fit K_d " + c.kdTokens());
      }
      d.waiting.remove(0);
      start(d, head, need);
      schedule(d);
    }
  }

  private void evict(DWorker d, Entry e) {
    d.entries.remove(e.session);
    d.entryTokens -= e.tokens;
    model.remove(d.rank, "s" + e.session);
  }

  /** Starts {@code r} on {@code d}; the caller checked that {@code need} tokens can be made free. */
  private void start(DWorker d, Req r, long need) {
    Entry own = d.entries.get(r.turn.session());
    if (r.locked != null) {
      r.locked.locks--;
      if (r.locked == own) {
        d.entries.remove(own.session);
        d.entryTokens -= own.tokens;
      }
    } else if (own != null && own.locks == 0) {
      evict(d, own);
    }
    Iterator<Entry> it = d.entries.values().iterator();
    while (c.kdTokens() - d.used() < r.kv() && it.hasNext()) {
      Entry e = it.next();
      if (e.locks == 0 && e != r.locked) {
        it.remove();
        d.entryTokens -= e.tokens;
        model.remove(d.rank, "s" + e.session);
      }
    }
    d.activeTokens += r.kv();
    r.locked = null;
    d.running++;
    peak = Math.max(peak, d.used());
    if (d.used() > c.kdTokens()) {
      throw new IllegalStateException("decode KV " + d.used() + " above K_d " + c.kdTokens());
    }
    double work = r.local ? (r.turn.inputTokens() - r.reused) * c.appendPrefillMsPerToken()
        : r.turn.inputTokens() * c.transferMsPerToken();
    r.firstMs = now + work + c.decodeMsPerToken();
    double finish = r.firstMs + (r.turn.outputTokens() - 1) * c.decodeMsPerToken();
    at(finish, () -> finish(d, r));
  }

  private void finish(DWorker d, Req r) {
    d.activeTokens -= r.kv();
    d.running--;
    Workload.Turn t = r.turn;
    Entry e = new Entry(t.session(), r.kv(), t.blocks());
    Entry old = d.entries.remove(t.session());
    if (old != null) {
      d.entryTokens -= old.tokens;
    }
    d.entries.put(t.session(), e);
    d.entryTokens += e.tokens;
    String session = "s" + t.session();
    model.put(d.rank, session, e.tokens);
    if (kvc != null) {
      model.addWaiting(d.rank, -r.promised);
      kvc.state().finished("sim", d.rank);
    }
    if (served[t.session()][t.turn()]++ > 0) {
      servedTwice++;
    }
    ttfts.add(r.firstMs - r.sentMs);
    e2es.add(now - r.sentMs);
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
    long rejects = kvc == null ? 0 : kvc.metrics().rejectsTotal();
    double dn = Math.max(1, n);
    return new Result(policy, n, nDirect / dn, nSeed / dn, nReseed / dn, nFallback / dn,
        inputTokens == 0 ? 0 : (double) reusedTokens / inputTokens, pct(tt, 50), pct(tt, 90), pct(tt, 99),
        pct(ee, 50), pct(ee, 99), nP / dn, migrations, rejects, tt, peak, servedTwice, now);
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
