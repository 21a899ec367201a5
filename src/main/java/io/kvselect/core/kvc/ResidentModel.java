package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

/**
 * The built-in Admit (Algorithm 2): the router's own accounting of the tokens each session keeps
 * resident on each decode worker, and the tokens promised to requests dispatched to a worker and
 * not finished (their whole KV), which the {@link KvcParams#countWaiting} refinement counts instead
 * of idle session caches.
 *
 * <p>Two sources feed the resident tokens, and a worker's are their sum:
 * <ul>
 *   <li><b>KV events</b> (a partition with an event index): the device blocks a worker reports
 *       ({@link #stored}, {@link #removed}, {@link #clearedWorker}, {@link #clearedRank}). A stored
 *       block is the session's whose live booking on that worker {@link #claim}s its local hash
 *       (its prompt's blocks), else the owner of its parent block (the blocks a request adds past
 *       its prompt continue its chain), else nobody's (a prefix several sessions share, or one no
 *       booking named): it then counts in the worker's {@link #used} but in no session's. A
 *       session evicted by its engine stops counting when its blocks are removed.
 *   <li><b>Bookings</b> (a partition without events): {@link #put} sets a session's tokens on the
 *       worker that served it, {@link #remove} forgets them.
 * </ul>
 *
 * <p>Threading: every method synchronizes on this instance (a leaf lock that never calls out), so
 * it is safe from any thread (the index writers' threads call the event methods). Complexity:
 * {@link #decide} is O(sessions on the worker) for the sum; a stored block costs one lookup per
 * live claim on its worker; other updates are O(1) expected per block.
 */
public final class ResidentModel {

  /** Marks a block claimed by several sessions' live bookings (a shared prefix). */
  private static final String SHARED = "";

  /** What the KV events of one decode rank say it holds on its device tier. */
  private static final class EventView {
    /** Block (engine hash) to its session, or {@link #SHARED} when it is nobody's. */
    final Long2ObjectOpenHashMap<String> owner = new Long2ObjectOpenHashMap<>();

    /** Session to its blocks. */
    final Map<String, Long> blocks = new HashMap<>();

    /** Session to the local hashes its live booking's prompt names. */
    final Map<String, LongOpenHashSet> claims = new HashMap<>();

    long blockTokens;
  }

  /** Decode worker to (session to resident tokens), from bookings. */
  private final Map<WorkerRank, Map<String, Long>> resident = new HashMap<>();

  /** Decode worker to what its KV events report. */
  private final Map<WorkerRank, EventView> events = new HashMap<>();

  /** Decode worker to tokens of dispatched, unfinished requests. */
  private final Map<WorkerRank, Long> waiting = new HashMap<>();

  /** Records that {@code session} keeps {@code tokens} resident on {@code d} (0 removes it). */
  public synchronized void put(WorkerRank d, String session, long tokens) {
    if (tokens <= 0) {
      remove(d, session);
      return;
    }
    resident.computeIfAbsent(d, k -> new HashMap<>()).put(session, tokens);
  }

  /** Forgets {@code session} on {@code d} (evicted, or known to have moved away). */
  public synchronized void remove(WorkerRank d, String session) {
    Map<String, Long> m = resident.get(d);
    if (m != null) {
      m.remove(session);
      if (m.isEmpty()) {
        resident.remove(d);
      }
    }
  }

  /** Forgets everything about {@code d} (worker removed). */
  public synchronized void removeWorker(WorkerRank d) {
    resident.remove(d);
    events.remove(d);
    waiting.remove(d);
  }

  private EventView view(WorkerRank d) {
    return events.computeIfAbsent(d, k -> new EventView());
  }

  /**
   * A booking of {@code session} on {@code d} whose prompt has the local block hashes
   * {@code blocks} ({@code blockTokens} tokens each): the blocks {@code d} stores with those hashes
   * are the session's. Replaces the session's previous claim on {@code d}.
   */
  public synchronized void claim(WorkerRank d, String session, long[] blocks, int blockTokens) {
    EventView v = view(d);
    v.blockTokens = blockTokens;
    v.claims.put(session, new LongOpenHashSet(blocks));
  }

  /** The block size of {@code d}'s partition, in tokens (what a reported block counts for). */
  public synchronized void blockTokens(WorkerRank d, int blockTokens) {
    view(d).blockTokens = blockTokens;
  }

  /** The booking's claim ends (it was freed); blocks stored later follow their parent. */
  public synchronized void unclaim(WorkerRank d, String session) {
    EventView v = events.get(d);
    if (v != null) {
      v.claims.remove(session);
    }
  }

  /**
   * {@code d} stored device blocks {@code externalHashes} (local hashes {@code localHashes}),
   * extending {@code parentExternalHash} when {@code hasParent}. A block already known is skipped.
   */
  public synchronized void stored(
      WorkerRank d,
      boolean hasParent,
      long parentExternalHash,
      long[] externalHashes,
      long[] localHashes) {
    EventView v = view(d);
    String prev = hasParent ? v.owner.get(parentExternalHash) : null;
    for (int i = 0; i < externalHashes.length; i++) {
      String known = v.owner.get(externalHashes[i]);
      if (known != null) {
        prev = known;
        continue;
      }
      String s = claimant(v, localHashes[i]);
      if (s == null) {
        s = prev == null ? SHARED : prev;
      }
      v.owner.put(externalHashes[i], s);
      if (!s.isEmpty()) {
        v.blocks.merge(s, 1L, Long::sum);
      }
      prev = s;
    }
  }

  /** The one session whose live claim on the view names {@code local}, {@link #SHARED} for several, else null. */
  private static String claimant(EventView v, long local) {
    String found = null;
    for (Map.Entry<String, LongOpenHashSet> c : v.claims.entrySet()) {
      if (c.getValue().contains(local)) {
        if (found != null) {
          return SHARED;
        }
        found = c.getKey();
      }
    }
    return found;
  }

  /** {@code d} removed device blocks {@code externalHashes}; unknown ones are skipped. */
  public synchronized void removed(WorkerRank d, long[] externalHashes) {
    EventView v = events.get(d);
    if (v == null) {
      return;
    }
    for (long h : externalHashes) {
      String s = v.owner.remove(h);
      if (s != null && !s.isEmpty()) {
        v.blocks.computeIfPresent(s, (k, n) -> n <= 1 ? null : n - 1);
      }
    }
  }

  /** Every rank of {@code workerId} dropped all its blocks ({@code AllBlocksCleared}). */
  public synchronized void clearedWorker(long workerId) {
    for (Map.Entry<WorkerRank, EventView> e : events.entrySet()) {
      if (e.getKey().workerId() == workerId) {
        clearBlocks(e.getValue());
      }
    }
  }

  /** {@code d} dropped all its blocks (its event stream was reset). */
  public synchronized void clearedRank(WorkerRank d) {
    EventView v = events.get(d);
    if (v != null) {
      clearBlocks(v);
    }
  }

  private static void clearBlocks(EventView v) {
    v.owner.clear();
    v.blocks.clear();
  }

  /** Adds (or with a negative value, removes) tokens promised to unfinished requests on {@code d}. */
  public synchronized void addWaiting(WorkerRank d, long tokens) {
    long v = Math.max(0, waiting.getOrDefault(d, 0L) + tokens);
    if (v == 0) {
      waiting.remove(d);
    } else {
      waiting.put(d, v);
    }
  }

  /** The tokens {@code session} keeps on {@code d}: booked, plus its blocks the events report. */
  public synchronized long residentTokens(WorkerRank d, String session) {
    Map<String, Long> m = resident.get(d);
    long booked = m == null ? 0 : m.getOrDefault(session, 0L);
    EventView v = events.get(d);
    return booked + (v == null ? 0 : v.blocks.getOrDefault(session, 0L) * v.blockTokens);
  }

  /**
   * The tokens {@code d} holds: every session's booked tokens plus every device block its events
   * report (a shared block once, whoever uses it).
   */
  public synchronized long used(WorkerRank d) {
    Map<String, Long> m = resident.get(d);
    long s = 0;
    if (m != null) {
      for (long v : m.values()) {
        s += v;
      }
    }
    EventView v = events.get(d);
    if (v != null) {
      s += (long) v.owner.size() * v.blockTokens;
    }
    return s;
  }

  public synchronized long waitingTokens(WorkerRank d) {
    return waiting.getOrDefault(d, 0L);
  }

  /** The resident and waiting tokens of {@code d}, read together. */
  public synchronized KvcAccount account(WorkerRank d) {
    return new KvcAccount(used(d), waitingTokens(d));
  }

  /**
   * Algorithm 2 for {@code r} on {@code d} with capacity {@code capacityTokens} ({@code K_d}).
   * Admitting changes nothing here: the caller records the booking.
   */
  public synchronized AdmitDecision decide(
      WorkerRank d, KvcRequest r, long capacityTokens, KvcParams p) {
    long own = residentTokens(d, r.sessionId());
    long base;
    if (p.countWaiting()) {
      base = waitingTokens(d);
    } else {
      base = used(d);
      if (p.accounting() == AdmitAccounting.NET) {
        base -= own;
      }
    }
    boolean capOk = base + r.inputTokens() <= p.rho() * capacityTokens;
    if (own > 0) {
      if (r.appendTokens() > p.tauAppend()) {
        return AdmitDecision.reject(AdmitDecision.LARGE_APPEND);
      }
      if (p.countWaiting()) {
        capOk = r.inputTokens() <= capacityTokens;
      }
      return capOk
          ? AdmitDecision.admit(KvcMode.DIRECT)
          : AdmitDecision.reject(AdmitDecision.NO_CAPACITY);
    }
    if (!capOk) {
      return AdmitDecision.reject(AdmitDecision.NOT_RESIDENT_NO_CAPACITY);
    }
    return AdmitDecision.admit(r.turn() == 0 ? KvcMode.SEED : KvcMode.RESEED);
  }

  /** This model as an {@link Admission} (already-complete stages). */
  public Admission admission(ToLongFunction<WorkerRank> capacityTokens, KvcParams p) {
    return (d, r) ->
        CompletableFuture.completedFuture(decide(d, r, capacityTokens.applyAsLong(d), p));
  }
}
