package io.kvselect.tools.sim;

import io.kvselect.core.events.KvEvent;
import io.kvselect.core.index.WorkerRank;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Consumer;

/**
 * The simulated prefill (P) and decode (D) engines of a run and their physical model (see
 * {@link Simulator}): each D engine's KV memory (idle session caches, evicted least recently used,
 * and the reserved KV of its requests), its slots and waiting queue; each P engine's FIFO queue,
 * one prefill at a time; the timing of append-prefill, prefill, KV transfer and decode. A D engine
 * publishes the KV events of its prefix cache ({@link EngineBlocks}) to the router as its caches
 * change; a request's first token is the router's {@code prefill_complete} and its end the
 * router's {@code free}, then {@link SimTally#served} and the client's completion callback.
 *
 * <p>The engines' view of their caches is their own, not the router's (which learns them from the
 * KV events). Mutable (every engine's caches, queues and counts, the peak decode KV); owned by one
 * {@link Simulator} and confined to its thread.
 */
final class SimEngines {

  /** Worker id of the first P engine; the others follow. */
  static final long FIRST_PREFILL_ID = 1;

  /** Worker id of the first D engine; the others follow. */
  static final long FIRST_DECODE_ID = 100;

  /** One session's idle cache on a D engine (or the cache a dispatched request locked). */
  static final class Entry {
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

  private static final class DWorker {
    final WorkerRank rank;
    final EngineBlocks cache;
    final LinkedHashMap<Integer, Entry> entries = new LinkedHashMap<>();
    final List<SimRequest> waiting = new ArrayList<>();
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
    final ArrayDeque<SimRequest> queue = new ArrayDeque<>();
    boolean busy;
  }

  private final Simulator.Config c;
  private final int blockTokens;
  private final SimEventLoop loop;
  private final SimRouter router;
  private final SessionText text;
  private final SimTally tally;
  private final Consumer<SimRequest> completed;
  private final DWorker[] ds;
  private final PWorker[] ps;
  private long peak;

  /**
   * Registers the D engines with the router, then the P engines when {@code registerPrefill}.
   *
   * @param completed called when a request got its last token, after its engine moved on
   */
  SimEngines(
      Simulator.Config c,
      int blockTokens,
      SimEventLoop loop,
      SimRouter router,
      SessionText text,
      SimTally tally,
      boolean registerPrefill,
      Consumer<SimRequest> completed) {
    this.c = c;
    this.blockTokens = blockTokens;
    this.loop = loop;
    this.router = router;
    this.text = text;
    this.tally = tally;
    this.completed = completed;
    ds = new DWorker[c.decodeWorkers()];
    for (int i = 0; i < ds.length; i++) {
      ds[i] = new DWorker(router.addWorker(FIRST_DECODE_ID + i, true, c.kdTokens()), blockTokens);
    }
    ps = new PWorker[c.prefillWorkers()];
    for (int i = 0; i < ps.length; i++) {
      ps[i] = new PWorker();
      if (registerPrefill) {
        router.addWorker(FIRST_PREFILL_ID + i, false, 0);
      }
    }
  }

  int decodeWorkers() {
    return ds.length;
  }

  int prefillWorkers() {
    return ps.length;
  }

  /** The router's rank of D engine {@code d}. */
  WorkerRank rank(int d) {
    return ds[d].rank;
  }

  /** The most KV any D engine held at once. */
  long peak() {
    return peak;
  }

  // ---- the caches ----

  /** Tokens of {@code t}'s prefix resident in cache {@code e}. */
  long overlap(Workload.Turn t, Entry e) {
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
    return Math.min((long) k * blockTokens, Math.min(e.tokens, t.inputTokens() - 1));
  }

  /** The cache on D engine {@code d} with the most overlap with {@code t} (null when none overlaps). */
  Entry best(Workload.Turn t, int d) {
    Entry own = ds[d].entries.get(t.session());
    if (t.blocks() == null) {
      return own != null && overlap(t, own) > 0 ? own : null;
    }
    Entry best = null;
    long bo = 0;
    for (Entry e : ds[d].entries.values()) {
      long o = overlap(t, e);
      if (o > bo || (o == bo && o > 0 && e == own)) {
        best = e;
        bo = o;
      }
    }
    return best;
  }

  /** Session {@code session} closed: every D engine frees its idle cache, then admits what waits. */
  void closeSession(int session) {
    for (DWorker d : ds) {
      Entry e = d.entries.get(session);
      if (e != null && e.locks == 0) {
        evict(d, e);
      }
    }
    for (DWorker d : ds) {
      schedule(d);
    }
  }

  // ---- prefill engines ----

  /** Queues {@code r} on its P engine {@code r.p}. */
  void prefill(SimRequest r) {
    ps[r.p].queue.add(r);
    startP(ps[r.p]);
  }

  private void startP(PWorker p) {
    if (p.busy || p.queue.isEmpty()) {
      return;
    }
    SimRequest r = p.queue.poll();
    p.busy = true;
    loop.at(
        loop.now() + r.turn.inputTokens() * c.prefillMsPerToken(),
        () -> {
          p.busy = false;
          if (c.reserve() == Simulator.DecodeReserve.AT_DISPATCH) {
            decode(ds[r.d], r, r.turn.inputTokens() * c.transferMsPerToken());
          } else {
            enqueueD(r);
          }
          startP(p);
        });
  }

  // ---- decode engines ----

  /** Queues {@code r} for memory and a slot on its D engine {@code r.d}. */
  void enqueueD(SimRequest r) {
    ds[r.d].waiting.add(r);
    schedule(ds[r.d]);
  }

  /**
   * Tokens {@code r} adds to its D worker when it starts: its whole KV, less its own session's
   * cache that it extends (another session's cache it read a shared prefix from stays where it is).
   */
  private static long need(SimRequest r) {
    return r.kv()
        - (r.locked != null && r.locked.session == r.turn.session() ? r.locked.tokens : 0);
  }

  /** Idle tokens {@code r} may evict on {@code d}. */
  private static long evictable(DWorker d, SimRequest r) {
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
    for (Iterator<SimRequest> it = d.waiting.iterator(); it.hasNext() && d.running < c.slots(); ) {
      SimRequest r = it.next();
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
      SimRequest head = d.waiting.get(0);
      for (SimRequest q : d.waiting) {
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
  private void start(DWorker d, SimRequest r) {
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
    } else if (c.reserve() == Simulator.DecodeReserve.AT_DISPATCH) {
      prefill(r);
    } else {
      decode(d, r, r.turn.inputTokens() * c.transferMsPerToken());
    }
  }

  /** {@code r}, holding its memory on {@code d}, decodes after {@code workMs} (append-prefill or KV transfer). */
  private void decode(DWorker d, SimRequest r, double workMs) {
    r.firstMs = loop.now() + workMs + c.decodeMsPerToken();
    loop.at(r.firstMs, () -> router.prefillComplete(r.id));
    double finish = r.firstMs + (r.turn.outputTokens() - 1) * c.decodeMsPerToken();
    loop.at(finish, () -> finish(d, r));
  }

  private void finish(DWorker d, SimRequest r) {
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
    tally.served(r, loop.now());
    schedule(d);
    completed.accept(r);
  }
}
