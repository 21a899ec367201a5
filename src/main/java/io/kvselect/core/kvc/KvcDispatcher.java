package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.ToLongFunction;

/**
 * Algorithm 3 (Dispatch): probes up to {@code epsilon} decode workers chosen by {@link KvcRoute}
 * (each at most once), asking {@link Admission}; the first admission wins (reset-on-success, pin,
 * in-flight and assigned are recorded in {@link KvcState}); a reject bumps the session's counter
 * for that worker. When the probes run out: Fallback with round-robin prefill and decode workers
 * (under the {@link KvcParams#countWaiting} refinement, the decode worker with the least accounted
 * KV, which then becomes the session's pin with its reject counter reset, since the session's KV
 * will live there).
 *
 * <p>Everything runs by composing stages of the state and the admission; nothing waits. With
 * {@code record == false} (a query that books nothing) the same decision is computed but nothing
 * is written to the state, and the round-robin cursors are read, not moved. Stateless itself; safe
 * from any thread.
 */
public final class KvcDispatcher {

  /** Round-robin cursor names of Fallback and of seed prefill. */
  public static final String PREFILL_POOL = "prefill";

  public static final String DECODE_POOL = "decode";

  private final KvcState state;
  private final KvcMetrics metrics;

  public KvcDispatcher(KvcState state) {
    this(state, new KvcMetrics());
  }

  /** A dispatcher counting recorded dispatches into {@code metrics}. */
  public KvcDispatcher(KvcState state, KvcMetrics metrics) {
    this.state = state;
    this.metrics = metrics;
  }

  public KvcMetrics metrics() {
    return metrics;
  }

  public KvcState state() {
    return state;
  }

  /**
   * Dispatches {@code r} in {@code partition}.
   *
   * @param decode the eligible decode workers, in a stable order (non-empty)
   * @param overlapBlocks the request's resident prefix blocks on a decode worker
   * @param prefill the prefill workers, in a stable order (may be empty)
   */
  public CompletionStage<KvcOutcome> dispatch(
      String partition,
      KvcRequest r,
      KvcParams p,
      List<WorkerRank> decode,
      ToLongFunction<WorkerRank> overlapBlocks,
      List<WorkerRank> prefill,
      Admission admission,
      boolean record) {
    return dispatch(partition, r, p, decode, overlapBlocks, d -> 0, prefill, admission, record);
  }

  /** As above, with the KV the router accounts to each decode worker (read by the refinement's Route). */
  public CompletionStage<KvcOutcome> dispatch(
      String partition,
      KvcRequest r,
      KvcParams p,
      List<WorkerRank> decode,
      ToLongFunction<WorkerRank> overlapBlocks,
      ToLongFunction<WorkerRank> residentTokens,
      List<WorkerRank> prefill,
      Admission admission,
      boolean record) {
    if (decode.isEmpty()) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("no decode workers"));
    }
    List<WorkerRank> ds = List.copyOf(decode);
    List<WorkerRank> ps = List.copyOf(prefill);
    return state
        .snapshot(partition, r.sessionId())
        .thenCompose(
            snap -> {
              Run run =
                  new Run(
                      partition,
                      r,
                      p,
                      ds,
                      overlapBlocks,
                      residentTokens,
                      ps,
                      admission,
                      record,
                      snap);
              return run.next();
            });
  }

  /** One dispatch in progress; confined to whichever thread completes its stages, one at a time. */
  private final class Run {
    final String partition;
    final KvcRequest r;
    final KvcParams p;
    final List<WorkerRank> decode;
    final ToLongFunction<WorkerRank> overlap;
    final ToLongFunction<WorkerRank> resident;
    final List<WorkerRank> prefill;
    final Admission admission;
    final boolean record;
    final KvcSnapshot snap;
    final int epsilon;
    final Map<WorkerRank, Integer> rejects;
    final Set<WorkerRank> tried = new HashSet<>();
    final List<KvcOutcome.Attempt> attempts = new ArrayList<>();

    Run(
        String partition,
        KvcRequest r,
        KvcParams p,
        List<WorkerRank> decode,
        ToLongFunction<WorkerRank> overlap,
        ToLongFunction<WorkerRank> resident,
        List<WorkerRank> prefill,
        Admission admission,
        boolean record,
        KvcSnapshot snap) {
      this.resident = resident;
      this.partition = partition;
      this.r = r;
      this.p = p;
      this.decode = decode;
      this.overlap = overlap;
      this.prefill = prefill;
      this.admission = admission;
      this.record = record;
      this.snap = snap;
      this.epsilon = p.epsilonFor(decode.size());
      this.rejects = new HashMap<>(snap.rejects());
    }

    CompletionStage<KvcOutcome> next() {
      if (attempts.size() >= epsilon) {
        return fallback();
      }
      List<KvcRoute.Option> options = new ArrayList<>();
      for (WorkerRank d : decode) {
        if (!tried.contains(d)) {
          options.add(
              new KvcRoute.Option(
                  d,
                  overlap.applyAsLong(d),
                  snap.inflight().getOrDefault(d, 0L),
                  snap.assigned().getOrDefault(d, 0L),
                  rejects.getOrDefault(d, 0),
                  d.equals(snap.pin()),
                  p.countWaiting() ? resident.applyAsLong(d) : 0));
        }
      }
      if (options.isEmpty()) {
        return fallback();
      }
      WorkerRank d = options.get(KvcRoute.route(options, p).index()).rank();
      return admission
          .admit(d, r)
          .thenCompose(
              dec -> {
                if (dec.admitted()) {
                  CompletionStage<WorkerRank> before =
                      record
                          ? state.admitted(partition, r.sessionId(), d, p.resetScope())
                          : CompletableFuture.completedFuture(snap.pin());
                  return before.thenApply(
                      prev -> {
                        KvcOutcome o =
                            new KvcOutcome(
                                dec.mode(),
                                d,
                                null,
                                attempts,
                                prev,
                                prev != null && !prev.equals(d));
                        if (record) {
                          metrics.served(o.mode(), o.migrated());
                        }
                        return o;
                      });
                }
                tried.add(d);
                rejects.merge(d, 1, Integer::sum);
                attempts.add(new KvcOutcome.Attempt(d, dec.reason()));
                if (record) {
                  metrics.rejected(dec.reason(), rejects.get(d) == p.tauReject());
                }
                CompletionStage<Void> bumped =
                    record
                        ? state.rejected(partition, r.sessionId(), d)
                        : CompletableFuture.completedFuture(null);
                return bumped.thenCompose(v -> next());
              })
          .thenCompose(
              o ->
                  o.mode() == KvcMode.SEED || o.mode() == KvcMode.RESEED
                      ? withPrefill(o)
                      : CompletableFuture.completedFuture(o));
    }

    /** The cursor's next value: taken by a booking, only read by a query. */
    CompletionStage<Long> roundRobin(String pool) {
      return record ? state.nextRoundRobin(partition, pool) : state.peekRoundRobin(partition, pool);
    }

    CompletionStage<KvcOutcome> withPrefill(KvcOutcome o) {
      if (o.prefill() != null || prefill.isEmpty()) {
        return CompletableFuture.completedFuture(o);
      }
      return roundRobin(PREFILL_POOL)
          .thenApply(
              i ->
                  new KvcOutcome(
                      o.mode(),
                      o.decode(),
                      prefill.get((int) Math.floorMod(i, (long) prefill.size())),
                      o.attempts(),
                      o.previousPin(),
                      o.migrated()));
    }

    /**
     * Fallback's decode worker: the round-robin one ({@code start}), or under the
     * {@link KvcParams#countWaiting} refinement the worker with the least accounted KV, ties
     * broken in round-robin order from {@code start}.
     */
    WorkerRank fallbackDecode(int start) {
      int n = decode.size();
      WorkerRank d = decode.get(start);
      if (!p.countWaiting()) {
        return d;
      }
      long least = resident.applyAsLong(d);
      for (int k = 1; k < n; k++) {
        WorkerRank c = decode.get((start + k) % n);
        long v = resident.applyAsLong(c);
        if (v < least) {
          least = v;
          d = c;
        }
      }
      return d;
    }

    CompletionStage<KvcOutcome> fallback() {
      return roundRobin(DECODE_POOL)
          .thenCompose(
              di -> {
                WorkerRank d = fallbackDecode((int) Math.floorMod(di, (long) decode.size()));
                CompletionStage<Long> pi =
                    prefill.isEmpty()
                        ? CompletableFuture.completedFuture(-1L)
                        : roundRobin(PREFILL_POOL);
                return pi.thenCompose(
                    i -> {
                      WorkerRank pw =
                          i < 0 ? null : prefill.get((int) Math.floorMod(i, (long) prefill.size()));
                      // under the refinement the session's KV will live on d: pin it there, reset
                      // d's counter
                      CompletionStage<Void> rec =
                          !record
                              ? CompletableFuture.completedFuture(null)
                              : p.countWaiting()
                                  ? state
                                      .admitted(partition, r.sessionId(), d, p.resetScope())
                                      .thenApply(x -> null)
                                  : state.fallback(partition, r.sessionId(), d);
                      return rec.thenApply(
                          v -> {
                            if (record) {
                              metrics.served(KvcMode.FALLBACK, false);
                            }
                            return new KvcOutcome(
                                KvcMode.FALLBACK, d, pw, attempts, snap.pin(), false);
                          });
                    });
              });
    }
  }
}
