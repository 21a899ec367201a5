package io.kvselect.core.service;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.core.select.PolicyRegistry;
import io.kvselect.core.session.SessionAffinity;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.random.RandomGenerator;

/**
 * {@code POST /select} and {@code POST /select_and_reserve}: the request's policy stages (a
 * {@link DispatchStage} when its policy declares one), then filter -> pick -> admission under the
 * partition lock, parking in the router queue while every eligible rank is busy, and for a
 * booking the session's compare-and-bind with one retry when a concurrent booking bound it first.
 *
 * <p>State and owners: none of its own. The partitions' load and queues are owned by each
 * partition's lock ({@link Partition}), the reservation index by {@link Bookings}, the session
 * table and pending store by their seams; this class only sequences them, taking a partition's
 * lock around the steps that touch it and never while it waits for a stage.
 */
final class SelectionFlow {

  private final ServiceSettings settings;
  private final RandomGenerator rng;
  private final ServiceGate gate;
  private final PolicyRegistry policies;
  private final Selector selector;
  private final RouterQueueing queueing;
  private final Bookings bookings;
  private final Booker booker;
  private final PendingStore<PendingKey, PendingSelection> pending;
  private final SessionAffinity affinity;
  private final IndexShards shards;

  SelectionFlow(
      ServiceSettings settings,
      RandomGenerator rng,
      ServiceGate gate,
      PolicyRegistry policies,
      Selector selector,
      RouterQueueing queueing,
      Bookings bookings,
      Booker booker,
      PendingStore<PendingKey, PendingSelection> pending,
      SessionAffinity affinity,
      IndexShards shards) {
    this.settings = settings;
    this.rng = rng;
    this.gate = gate;
    this.policies = policies;
    this.selector = selector;
    this.queueing = queueing;
    this.bookings = bookings;
    this.booker = booker;
    this.pending = pending;
    this.affinity = affinity;
    this.shards = shards;
  }

  /** See {@link SelectionService#select(SelectRequest, boolean, CompletionStage)}. */
  CompletionStage<Selection> select(SelectRequest req, boolean reserve, CompletionStage<?> gone) {
    return SelectionService.attempt(
        () -> {
          if (req.priorityJump() != null
              && !(req.priorityJump() >= 0 && req.priorityJump() < 1e12)) {
            throw SelectionException.unprocessable(
                "priority_jump must be a non-negative number of seconds, got "
                    + req.priorityJump());
          }
          Partition p = gate.readyPartition(req.partition());
          RouterConfig cfg = settings.router().with(req.override());
          if (policies.resolve(cfg.selectionPolicy().name()) instanceof DispatchStage d
              && d.takes(req)) {
            return d.select(p, cfg, req, reserve, pinned -> selectResolved(pinned, reserve, gone));
          }
          return selectResolved(req, reserve, gone);
        });
  }

  /** The selection once the policy's dispatch (if any) has run: the ordinary pipeline. */
  private CompletionStage<Selection> selectResolved(
      SelectRequest req, boolean reserve, CompletionStage<?> gone) {
    return SelectionService.attempt(
        () -> {
          Partition p = gate.readyPartition(req.partition());
          Partition.Members m = p.members();
          RouterConfig cfg = settings.router().with(req.override());
          NormalizedPrompt np =
              PromptNormalizer.normalize(
                  req.prompt(), m.blockSize(), m.eagle(), cfg.load().assumeKvReuse(), true, rng);
          String session = sessionOf(req.effectiveSessionId());
          if (!reserve) {
            return lookup(p, session)
                .thenCompose(bound -> selectOnly(p, m, cfg, np, req, bound, session, gone));
          }
          String id = req.selectionId() != null ? req.selectionId() : UUID.randomUUID().toString();
          bookings.claim(id);
          return lookup(p, session)
              .thenCompose(
                  bound -> selectAndBook(p, m, cfg, np, req, id, session, bound, false, gone))
              .whenComplete(
                  (s, e) -> {
                    if (e != null) {
                      bookings.unclaim(id);
                    }
                  });
        });
  }

  /** What a booking admits once its rank is chosen; null for a query-only selection. */
  private record BookingSpec(String id, String session, boolean track) {}

  /**
   * One try at choosing (and, for a booking, admitting) under the partition lock: null when the
   * request may queue and every eligible rank is busy. {@code ev} is the event overlap read before
   * the lock, or null to read it now (a request leaving the queue sees refreshed overlap).
   */
  private Selector.Choice attemptLocked(
      Partition p,
      Partition.Members m,
      RouterConfig cfg,
      NormalizedPrompt np,
      SelectRequest req,
      WorkerRank bound,
      OverlapScores ev,
      BookingSpec booking) {
    Partition.Members cur = current(p, m);
    List<WorkerRank> ranks = selector.filter(cur, req, bound);
    Double threshold = RouterQueueing.threshold(p, cfg, req);
    if (threshold != null
        && (booking != null || !req.advisory())
        && RouterQueueing.allBusyLocked(p, cur, ranks, threshold)) {
      return null;
    }
    Selector.Choice c =
        selector.chooseAmongLocked(
            p, cur, cfg, np, req, ranks, ev != null ? ev : p.eventOverlap(np.blockHashes()));
    if (booking != null) {
      Booker.admitLocked(p, admission(c, np, req, booking), cur.blockSize());
    }
    return c;
  }

  private static Booker.Admission admission(
      Selector.Choice c, NormalizedPrompt np, SelectRequest req, BookingSpec b) {
    return new Booker.Admission(
        b.id(),
        c.rank(),
        np,
        req.expectedOutputTokens(),
        b.track(),
        c.effectivePrefillTokens(),
        b.session(),
        req.selectionId() != null);
  }

  /** Chooses now, or parks the request until {@link #attemptLocked} succeeds for it. */
  private CompletionStage<Selector.Choice> choose(
      Partition p,
      Partition.Members m,
      RouterConfig cfg,
      NormalizedPrompt np,
      SelectRequest req,
      WorkerRank bound,
      BookingSpec booking,
      CompletionStage<?> gone) {
    return shards
        .findMatches(p.key, np.blockHashes())
        .thenCompose(ev -> chooseWith(p, m, cfg, np, req, bound, booking, gone, ev));
  }

  /** {@link #choose} once the event overlap {@code ev} is read (null: none, or read under the lock). */
  private CompletionStage<Selector.Choice> chooseWith(
      Partition p,
      Partition.Members m,
      RouterConfig cfg,
      NormalizedPrompt np,
      SelectRequest req,
      WorkerRank bound,
      BookingSpec booking,
      CompletionStage<?> gone,
      OverlapScores ev) {
    RouterQueueing.Waiter w;
    synchronized (p.lock) {
      Selector.Choice c = attemptLocked(p, m, cfg, np, req, bound, ev, booking);
      if (c != null) {
        return CompletableFuture.completedFuture(c);
      }
      Partition.Members cur = p.members();
      long uncached =
          Selector.bestUncachedLocked(p, cur, cfg, np, selector.filter(cur, req, bound), ev);
      w =
          queueing.parkLocked(
              p,
              req,
              np.isl(),
              uncached,
              System.nanoTime(),
              () -> attemptLocked(p, m, cfg, np, req, bound, null, booking));
    }
    if (gone != null) {
      gone.thenRun(() -> queueing.cancel(p, w, System.nanoTime()));
    }
    if (gate.shuttingDown()) {
      queueing.rejectAll(p, System.nanoTime(), "selection service is shutting down");
    }
    return RouterQueueing.served(w);
  }

  private CompletionStage<Selection> selectOnly(
      Partition p,
      Partition.Members m,
      RouterConfig cfg,
      NormalizedPrompt np,
      SelectRequest req,
      WorkerRank bound,
      String session,
      CompletionStage<?> gone) {
    boolean track = cfg.load().trackPrefillTokens();
    return choose(p, m, cfg, np, req, bound, null, gone)
        .thenCompose(
            c -> {
              Selection s = Selector.response(p, cfg, np, req, c, req.selectionId(), false, track);
              if (req.selectionId() == null) {
                return CompletableFuture.completedFuture(s);
              }
              PendingSelection ps =
                  new PendingSelection(
                      c.rank(),
                      np,
                      c.effectivePrefillTokens(),
                      req.expectedOutputTokens(),
                      track,
                      session);
              return pending
                  .put(
                      new PendingKey(p.key, req.selectionId()),
                      ps,
                      ps.approximateBytes(req.selectionId(), p.key))
                  .thenApply(g -> s);
            });
  }

  /**
   * Chooses and admits under the partition lock (waiting in the router queue when every rank is
   * busy), then binds the session expecting {@code bound}. When another booking bound the session
   * first, the admission is undone and the choice made again with the winner as the binding (once;
   * a second loss answers 503).
   */
  private CompletionStage<Selection> selectAndBook(
      Partition p,
      Partition.Members m,
      RouterConfig cfg,
      NormalizedPrompt np,
      SelectRequest req,
      String id,
      String session,
      WorkerRank bound,
      boolean retried,
      CompletionStage<?> gone) {
    boolean track = cfg.load().trackPrefillTokens();
    BookingSpec spec = new BookingSpec(id, session, track);
    return choose(p, m, cfg, np, req, bound, spec, gone)
        .thenCompose(
            c -> {
              Booker.Admission a = admission(c, np, req, spec);
              return booker
                  .bind(p, a, bound)
                  .handle(
                      (won, err) -> {
                        if (err != null) {
                          booker.unadmit(p, id);
                          return CompletableFuture.<Selection>failedFuture(
                              SelectionException.unwrap(err));
                        }
                        if (!won.equals(c.rank())) {
                          booker.unadmit(p, id);
                          if (retried) {
                            return CompletableFuture.<Selection>failedFuture(
                                SelectionException.notReady(
                                    "session "
                                        + session
                                        + " is being bound by concurrent requests; retry"));
                          }
                          return selectAndBook(p, m, cfg, np, req, id, session, won, true, gone);
                        }
                        return booker
                            .commit(p, a, c.members().blockSize())
                            .thenApply(v -> Selector.response(p, cfg, np, req, c, id, true, track));
                      })
                  .thenCompose(s -> s);
            });
  }

  /**
   * The partition's current membership, checked against the snapshot the prompt was hashed with
   * (a block-size change in between answers 503: retry). Caller holds {@code p.lock}.
   */
  static Partition.Members current(Partition p, Partition.Members hashedWith) {
    Partition.Members cur = p.members();
    if (!cur.ready()) {
      throw SelectionException.notReady("no schedulable workers for " + p.key);
    }
    if (!Objects.equals(cur.blockSize(), hashedWith.blockSize())
        || !Objects.equals(cur.eagle(), hashedWith.eagle())) {
      throw SelectionException.notReady(
          "the block size of " + p.key + " changed during the selection; retry");
    }
    return cur;
  }

  private CompletionStage<WorkerRank> lookup(Partition p, String session) {
    if (session == null) {
      return CompletableFuture.completedFuture(null);
    }
    return affinity.lookup(p.key.toString(), session).thenApply(o -> o.orElse(null));
  }

  private String sessionOf(String sessionId) {
    if (affinity == null || sessionId == null) {
      return null;
    }
    SessionAffinity.requireValidSessionId(sessionId);
    return sessionId;
  }
}
