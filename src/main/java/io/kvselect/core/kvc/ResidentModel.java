package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

/**
 * The built-in Admit (Algorithm 2): the router's own accounting of the tokens each session keeps
 * resident on each decode worker, and the tokens promised to requests dispatched to a worker and
 * not finished (their whole KV), which the {@link KvcParams#countWaiting} refinement counts instead
 * of idle session caches. The owner feeds it:
 * bookings set a session's tokens on the admitting worker, KV events or evictions remove them.
 *
 * <p>Threading: every method synchronizes on this instance (a leaf lock that never calls out), so
 * it is safe from any thread. Complexity: {@link #decide} is O(sessions on the worker) for the
 * sum; updates are O(1) expected.
 */
public final class ResidentModel {

  /** Decode worker to (session to resident tokens). */
  private final Map<WorkerRank, Map<String, Long>> resident = new HashMap<>();
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

  /** Forgets everything about {@code d} (worker removed, or all its blocks cleared). */
  public synchronized void removeWorker(WorkerRank d) {
    resident.remove(d);
    waiting.remove(d);
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

  public synchronized long residentTokens(WorkerRank d, String session) {
    Map<String, Long> m = resident.get(d);
    return m == null ? 0 : m.getOrDefault(session, 0L);
  }

  /** Sum of the resident tokens of every session on {@code d}. */
  public synchronized long used(WorkerRank d) {
    Map<String, Long> m = resident.get(d);
    long s = 0;
    if (m != null) {
      for (long v : m.values()) {
        s += v;
      }
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
  public synchronized AdmitDecision decide(WorkerRank d, KvcRequest r, long capacityTokens, KvcParams p) {
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
      return capOk ? AdmitDecision.admit(KvcMode.DIRECT) : AdmitDecision.reject(AdmitDecision.NO_CAPACITY);
    }
    if (!capOk) {
      return AdmitDecision.reject(AdmitDecision.NOT_RESIDENT_NO_CAPACITY);
    }
    return AdmitDecision.admit(r.turn() == 0 ? KvcMode.SEED : KvcMode.RESEED);
  }

  /** This model as an {@link Admission} (already-complete stages). */
  public Admission admission(ToLongFunction<WorkerRank> capacityTokens, KvcParams p) {
    return (d, r) -> CompletableFuture.completedFuture(decide(d, r, capacityTokens.applyAsLong(d), p));
  }
}
