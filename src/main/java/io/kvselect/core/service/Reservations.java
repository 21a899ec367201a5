package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.pending.PendingEntry;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.core.session.SessionAffinity;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.random.RandomGenerator;

/**
 * {@code POST /reservations}: the explicit form (the caller names the worker) and the replay of a
 * selection cached by {@code /select}. Both claim the id, admit under the partition lock, bind
 * the session when the selection carried one, and commit through {@link Booker}; a failure at
 * any step undoes the earlier ones. One instance per request; holds no state of its own.
 */
final class Reservations {

  private final ServiceGate gate;
  private final Bookings bookings;
  private final Booker booker;
  private final PendingStore<PendingKey, PendingSelection> pending;
  private final SessionAffinity affinity;
  private final RouterConfig router;
  private final RandomGenerator rng;

  Reservations(
      ServiceGate gate,
      Bookings bookings,
      Booker booker,
      PendingStore<PendingKey, PendingSelection> pending,
      SessionAffinity affinity,
      RouterConfig router,
      RandomGenerator rng) {
    this.gate = gate;
    this.bookings = bookings;
    this.booker = booker;
    this.pending = pending;
    this.affinity = affinity;
    this.router = router;
    this.rng = rng;
  }

  /**
   * The explicit form: books {@code worker_id}/{@code dp_rank}. A booking discards a cached
   * selection of the same id ({@link Booker#commit}); a request that fails leaves it in place.
   */
  CompletionStage<Reservation> explicit(ReservationRequest req) {
    String id = req.selectionId();
    return claimed(
        id,
        () -> {
          Partition p = gate.readyPartition(req.partition());
          Partition.Members m = p.members();
          WorkerRecord w = m.schedulableWorker(req.workerId());
          int dpRank =
              req.dpRank() != null
                  ? req.dpRank()
                  : w != null ? w.spec().dataParallelStartRank() : 0;
          if (w == null || !w.hasRank(dpRank)) {
            throw SelectionException.notFound(
                "schedulable worker "
                    + Long.toUnsignedString(req.workerId())
                    + " (dp_rank "
                    + dpRank
                    + ") not found for "
                    + p.key);
          }
          RouterConfig cfg = router.with(req.override());
          NormalizedPrompt np =
              PromptNormalizer.normalize(
                  req.prompt(), m.blockSize(), m.eagle(), cfg.load().assumeKvReuse(), false, rng);
          Long eff = req.effectivePrefillTokens();
          if (eff != null && (eff < 0 || eff > np.isl())) {
            throw SelectionException.badRequest(
                "effective_prefill_tokens ("
                    + eff
                    + ") must not exceed isl_tokens ("
                    + np.isl()
                    + ") and must not be negative");
          }
          boolean track =
              req.trackPrefillTokens() != null
                  ? req.trackPrefillTokens()
                  : eff != null || cfg.load().trackPrefillTokens();
          WorkerRank rank = new WorkerRank(w.workerId(), dpRank);
          Booker.Admission a;
          Partition.Members cur;
          synchronized (p.lock) {
            cur = SelectionFlow.current(p, m);
            requireRank(cur, p, rank);
            long prefill =
                eff != null
                    ? eff
                    : Selector.effectivePrefillLocked(p, cfg, np, rank, cur.blockSize());
            a =
                new Booker.Admission(
                    id, rank, np, req.expectedOutputTokens(), track, prefill, null, true);
            Booker.admitLocked(p, a, cur.blockSize());
          }
          String endpoint = cur.schedulableWorker(rank.workerId()).spec().endpoint();
          return booker
              .commit(p, a, cur.blockSize())
              .thenApply(x -> new Reservation(id, p.key, rank.workerId(), rank.dpRank(), endpoint));
        });
  }

  /** Replays the selection cached under the id; the entry is consumed only by a booking. */
  CompletionStage<Reservation> replay(ReservationRequest req) {
    String id = req.selectionId();
    PendingKey key = new PendingKey(req.partition(), id);
    return pending
        .peek(key)
        .thenCompose(
            e -> {
              if (e == null) {
                throw SelectionException.notFound(
                    "no pending selection "
                        + id
                        + " for "
                        + req.partition()
                        + " (expired, already used, or never selected)");
              }
              return claimed(id, () -> replay(req, key, e));
            });
  }

  private CompletionStage<Reservation> replay(
      ReservationRequest req, PendingKey key, PendingEntry<PendingSelection> e) {
    String id = req.selectionId();
    PendingSelection ps = e.value();
    Partition p = gate.readyPartition(req.partition());
    requireRank(p.members(), p, ps.rank());
    CompletionStage<WorkerRank> bound =
        ps.sessionId() == null || affinity == null
            ? CompletableFuture.completedFuture(null)
            : affinity.lookup(p.key.toString(), ps.sessionId()).thenApply(o -> o.orElse(null));
    return bound.thenCompose(
        b -> {
          if (b != null && !b.equals(ps.rank()) && p.schedulableWorker(b.workerId()) != null) {
            return pending
                .removeIfGeneration(key, e.generation())
                .<Reservation>thenApply(
                    x -> {
                      throw moved(ps, b, id);
                    });
          }
          Booker.Admission a =
              new Booker.Admission(
                  id,
                  ps.rank(),
                  ps.prompt(),
                  ps.expectedOutputTokens(),
                  ps.trackPrefillTokens(),
                  ps.effectivePrefillTokens(),
                  ps.sessionId(),
                  true);
          int bs;
          synchronized (p.lock) {
            Partition.Members cur = p.members();
            requireRank(cur, p, ps.rank());
            bs = cur.blockSize();
            Booker.admitLocked(p, a, bs);
          }
          return booker
              .bind(p, a, b)
              .handle(
                  (won, err) -> {
                    if (err != null || !won.equals(ps.rank())) {
                      booker.unadmit(p, id);
                      if (err != null) {
                        return CompletableFuture.<Reservation>failedFuture(
                            SelectionException.unwrap(err));
                      }
                      return pending
                          .removeIfGeneration(key, e.generation())
                          .<Reservation>thenApply(
                              x -> {
                                throw moved(ps, won, id);
                              });
                    }
                    String endpoint =
                        p.schedulableWorker(ps.rank().workerId()) != null
                            ? p.schedulableWorker(ps.rank().workerId()).spec().endpoint()
                            : null;
                    return booker
                        .commit(p, a, bs)
                        .thenCompose(x -> pending.removeIfGeneration(key, e.generation()))
                        .thenApply(
                            x ->
                                new Reservation(
                                    id, p.key, ps.rank().workerId(), ps.rank().dpRank(), endpoint));
                  })
              .thenCompose(s -> s);
        });
  }

  private static SelectionException moved(PendingSelection ps, WorkerRank bound, String id) {
    return SelectionException.badRequest(
        "session "
            + ps.sessionId()
            + " moved to worker "
            + Long.toUnsignedString(bound.workerId())
            + " after selection "
            + id);
  }

  private static void requireRank(Partition.Members m, Partition p, WorkerRank rank) {
    WorkerRecord w = m.schedulableWorker(rank.workerId());
    if (w == null || !w.hasRank(rank.dpRank())) {
      throw SelectionException.notFound(
          "schedulable worker "
              + Long.toUnsignedString(rank.workerId())
              + " not found for "
              + p.key);
    }
  }

  /** Runs {@code body} with {@code id} claimed, giving the claim back when it fails. */
  private CompletionStage<Reservation> claimed(
      String id, java.util.function.Supplier<CompletionStage<Reservation>> body) {
    bookings.claim(id);
    return SelectionService.attempt(body)
        .whenComplete(
            (r, err) -> {
              if (err != null) {
                bookings.unclaim(id);
              }
            });
  }
}
