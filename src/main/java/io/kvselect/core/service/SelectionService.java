package io.kvselect.core.service;

import io.kvselect.core.catalog.CatalogListener;
import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.core.queue.QueueConfig;
import java.time.Duration;
import io.kvselect.core.session.SessionAffinity;
import io.kvselect.core.select.SelectionPipeline;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;

/**
 * The selection service without transport: worker catalog, selection, reservations and their
 * lifecycle, inspection. This is the embedded Java API (build it with
 * {@link SelectionServiceBuilder}); the HTTP and event-bus adapters call exactly these methods.
 *
 * <p>Asynchronous seam: every method whose state may live in a cluster (catalog writes,
 * selections, reservations and their lifecycle) returns a {@link CompletionStage}. With the
 * local session table, pending store and syncs (the default) every stage is complete when the
 * method returns; clustered implementations complete later, and nothing here ever waits on a
 * stage. Failures complete the stage exceptionally with a {@link SelectionException} (possibly
 * wrapped, see {@link SelectionException#unwrap}); a failed call changes nothing.
 *
 * <p>Threading: every method is thread-safe and there is no service-wide lock. Each partition's
 * load and booking state is owned by that partition's lock ({@link Partition}); catalog writes
 * are serialized by the catalog lock ({@link WorkerRegistry}); prompt hashing, index lookups and
 * response building run outside every lock. See {@code docs/design.md} for the table of state,
 * owners and readers.
 */
public final class SelectionService {

  private final ServiceSettings settings;
  private final RandomGenerator rng;
  private final WorkerRegistry registry;
  private final PendingStore<PendingKey, PendingSelection> pending;
  private final SessionAffinity affinity;

  /** The session table this service books through, or null without session affinity. */
  public SessionAffinity sessionAffinity() {
    return affinity;
  }
  private final LoadSync loadSync;
  private final CatalogSync catalogSync;
  private final Bookings bookings = new Bookings();
  private final Booker booker;
  private final RouterQueueing queueing;
  private final Selector selector;
  private final Inspection inspection;
  private final PeerState peers;
  private final KvcSelection kvc;
  private final LifecycleForwarder lifecycle;
  private volatile boolean shuttingDown;
  /** Why new selections are refused now, or null ({@link #hold}). */
  private volatile java.util.function.Supplier<String> hold = () -> null;

  SelectionService(ServiceSettings settings, Clock clock, RandomGenerator rng, SelectionPipeline pipeline,
      SessionAffinity affinity, PendingStore<PendingKey, PendingSelection> pending, LoadSync loadSync,
      CatalogSync catalogSync, QueueConfig queueConfig, Duration queueTimeout, KvcSelection kvc,
      LifecycleForwarder lifecycle) {
    this.kvc = kvc;
    this.settings = settings;
    this.rng = rng;
    this.registry = new WorkerRegistry(settings, clock, queueConfig);
    this.queueing = new RouterQueueing(queueTimeout);
    this.pending = pending;
    this.affinity = affinity;
    this.loadSync = loadSync;
    this.catalogSync = catalogSync;
    this.lifecycle = lifecycle;
    this.selector = new Selector(pipeline, rng);
    this.booker = new Booker(bookings, affinity, pending, loadSync, this::drain);
    this.inspection = new Inspection(this, registry);
    this.peers = new PeerState(registry, bookings, affinity, this::drain, this::drainAll, this::droppedBookings);
  }

  public static SelectionServiceBuilder builder() {
    return new SelectionServiceBuilder();
  }

  /** Read-only views: loads, potential loads, overlap scores, dump. */
  public Inspection inspection() {
    return inspection;
  }

  public ServiceSettings settings() {
    return settings;
  }

  /** Registers a listener for catalog changes (called in order, by the catalog writer). */
  public void addCatalogListener(CatalogListener l) {
    registry.addListener(l);
  }

  /** Registers a listener called once per booking (see {@link BookingListener} for its thread rules). */
  public void addBookingListener(BookingListener l) {
    booker.addListener(l);
  }

  /** Registers an observer of how requests leave the router queues (metrics). */
  public void addQueueObserver(QueueObserver o) {
    queueing.addObserver(o);
  }

  // ---- workers ----

  /** {@code POST /workers}: inserts or fully replaces a worker record. */
  public CompletionStage<WorkerRecord> upsertWorker(WorkerSpec spec) {
    return attempt(() -> {
      WorkerRegistry.Applied a = registry.upsertLocal(spec, droppedBookings());
      drainAll();
      return published(a.record(), a.change());
    });
  }

  /**
   * {@code PATCH /workers/{id}}: applies {@code patch} to the current registration (under the
   * catalog lock, so concurrent patches compose). {@code patch} validates and may throw; it must
   * be pure.
   */
  public CompletionStage<WorkerRecord> patchWorker(long workerId, UnaryOperator<WorkerSpec> patch) {
    return attempt(() -> {
      WorkerRegistry.Applied a = registry.patchLocal(workerId, patch, droppedBookings());
      drainAll();
      return published(a.record(), a.change());
    });
  }

  /** {@code DELETE /workers/{id}}: removes the worker, its blocks and its bookings. */
  public CompletionStage<WorkerRecord> deleteWorker(long workerId) {
    return attempt(() -> {
      WorkerRegistry.Applied a = registry.removeLocal(workerId, droppedBookings());
      kvc.removeWorker(a.record());
      drainAll();
      CompletionStage<Void> unbound = affinity == null
          ? CompletableFuture.completedFuture(null) : affinity.removeWorker(workerId);
      return unbound.thenCompose(v -> published(a.record(), a.change()));
    });
  }

  private CompletionStage<WorkerRecord> published(WorkerRecord r, CatalogSync.CatalogChange change) {
    return catalogSync.publish(change).thenApply(v -> r);
  }

  /**
   * Called (under the dropped rank's partition lock) for every request dropped with a rank:
   * removes its reservation row and releases its session lease.
   */
  private java.util.function.BiConsumer<Partition, String> droppedBookings() {
    return (p, id) -> {
      Bookings.Booking b = bookings.drop(id);
      if (b != null) {
        booker.release(p.key.toString(), b.sessionId(), id);
      }
      kvc.released(id);
    };
  }

  public WorkerRecord worker(long workerId) {
    return registry.worker(workerId);
  }

  public List<WorkerRecord> listWorkers(String modelName, String routingGroup) {
    return registry.list(modelName, routingGroup);
  }

  /** {@code GET /ready}: ready when not shutting down, not held, and at least one worker is schedulable. */
  public ReadyStatus ready() {
    int n = registry.schedulableCount();
    return new ReadyStatus(!shuttingDown && hold.get() == null && n > 0, n, registry.all());
  }

  /**
   * Refuses new selections (503 with the reason) while {@code reason} answers non-null: a
   * clustered node fenced after a pause ({@code io.kvselect.core.budget.PauseFence}). Lifecycle
   * calls for existing bookings are not held. Set once by the node's wiring.
   */
  public void hold(java.util.function.Supplier<String> reason) {
    this.hold = java.util.Objects.requireNonNull(reason);
  }

  /**
   * Where a router queue's drain continues after its first {@value RouterQueueing#SLICE} served
   * requests: a node gives an executor off its event loops (the worker pool), so a capacity
   * change that wakes thousands of parked requests never holds, or starves, an event loop for
   * the whole backlog. Without one (embedding), the slices run in a loop on the calling thread. Set
   * once by the node's wiring, before requests arrive.
   */
  public void continueQueuesOn(java.util.concurrent.Executor executor) {
    queueing.continueOn(java.util.Objects.requireNonNull(executor));
  }

  /** Marks the service as shutting down: {@code /ready} turns false and selections fail with 503. */
  public void shutdown() {
    shuttingDown = true;
  }

  /**
   * A drain: fails every request waiting in a router queue with 503 and {@code message}, so its
   * caller retries elsewhere at once; returns how many there were. Call after {@link #shutdown()}
   * (a request parked concurrently sees the flag and is failed the same way).
   */
  public int rejectQueued(String message) {
    int n = 0;
    for (Partition p : registry.partitions()) {
      n += queueing.rejectAll(p, System.nanoTime(), message);
    }
    return n;
  }

  /**
   * Worker liveness (a node-local observation, not published to the catalog sync): with a
   * {@code reason}, a schedulable worker becomes {@code unschedulable} with it and gets no
   * selections, while its index, load and event listeners stay; with null, a worker marked so is
   * schedulable again. A registration of the worker clears the mark. Returns the current record
   * (null for an unknown worker).
   */
  public CompletionStage<WorkerRecord> setUnreachable(long workerId, String reason) {
    return attempt(() -> {
      WorkerRecord r = registry.setUnreachable(workerId, reason, droppedBookings());
      drainAll();
      return CompletableFuture.completedFuture(r);
    });
  }

  /** The reason {@link #setUnreachable} gave for {@code workerId}, or null when it is not marked. */
  public String unreachableReason(long workerId) {
    return registry.unreachableReason(workerId);
  }

  // ---- selection ----

  /**
   * {@code POST /select} ({@code reserve=false}: nothing is booked; a selection id caches the
   * booking inputs for a replayed reservation) or {@code POST /select_and_reserve}
   * ({@code reserve=true}: books atomically; a missing selection id is generated).
   */
  public CompletionStage<Selection> select(SelectRequest req, boolean reserve) {
    return select(req, reserve, null);
  }

  /**
   * As {@link #select(SelectRequest, boolean)}; when {@code gone} completes (the caller went
   * away), a request still waiting in the router queue leaves it at once.
   */
  public CompletionStage<Selection> select(SelectRequest req, boolean reserve, CompletionStage<?> gone) {
    return attempt(() -> {
      if (req.priorityJump() != null && !(req.priorityJump() >= 0 && req.priorityJump() < 1e12)) {
        throw SelectionException.unprocessable("priority_jump must be a non-negative number of seconds, got "
            + req.priorityJump());
      }
      Partition p = readyPartition(req.partition());
      RouterConfig cfg = settings.router().with(req.override());
      if (KvcSelection.takes(cfg, req)) {
        return kvc.dispatch(p, p.members(), cfg, req, reserve).thenCompose(plan ->
            selectResolved(plan.pinned(), reserve, gone).handle((s, e) -> {
              if (e != null) {
                if (reserve) {
                  kvc.failed(plan);
                }
                return CompletableFuture.<Selection>failedFuture(SelectionException.unwrap(e));
              }
              if (reserve) {
                kvc.booked(s.selectionId(), plan);
              }
              return CompletableFuture.completedFuture(s.withKvc(plan.answer()));
            }).thenCompose(x -> x));
      }
      return selectResolved(req, reserve, gone);
    });
  }

  /** KVC counters: requests by mode, rejects by reason, migrations, blacklist entries. */
  /** The KVC-Router's state (the cluster's when clustered); for metrics and {@code /cluster}. */
  public io.kvselect.core.kvc.KvcState kvcState() {
    return kvc.state();
  }

  public io.kvselect.core.kvc.KvcMetrics kvcMetrics() {
    return kvc.metrics();
  }

  /** The selection once the policy path is known (the kvc dispatcher's pinned request, or the request). */
  private CompletionStage<Selection> selectResolved(SelectRequest req, boolean reserve, CompletionStage<?> gone) {
    return attempt(() -> {
      Partition p = readyPartition(req.partition());
      Partition.Members m = p.members();
      RouterConfig cfg = settings.router().with(req.override());
      NormalizedPrompt np = PromptNormalizer.normalize(req.prompt(), m.blockSize(), m.eagle(),
          cfg.assumeKvReuse(), true, rng);
      String session = sessionOf(req.effectiveSessionId());
      if (!reserve) {
        return lookup(p, session).thenCompose(bound -> selectOnly(p, m, cfg, np, req, bound, session, gone));
      }
      String id = req.selectionId() != null ? req.selectionId() : UUID.randomUUID().toString();
      bookings.claim(id);
      return lookup(p, session)
          .thenCompose(bound -> selectAndBook(p, m, cfg, np, req, id, session, bound, false, gone))
          .whenComplete((s, e) -> {
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
  private Selector.Choice attemptLocked(Partition p, Partition.Members m, RouterConfig cfg, NormalizedPrompt np,
      SelectRequest req, WorkerRank bound, OverlapScores ev, BookingSpec booking) {
    Partition.Members cur = current(p, m);
    List<WorkerRank> ranks = selector.filter(cur, req, bound);
    Double threshold = RouterQueueing.threshold(p, cfg, req);
    if (threshold != null && (booking != null || !req.advisory())
        && RouterQueueing.allBusyLocked(p, cur, ranks, threshold)) {
      return null;
    }
    Selector.Choice c = selector.chooseAmongLocked(p, cur, cfg, np, req, ranks,
        ev != null ? ev : p.eventOverlap(np.blockHashes()));
    if (booking != null) {
      Booker.admitLocked(p, admission(c, np, req, booking), cur.blockSize());
    }
    return c;
  }

  private static Booker.Admission admission(Selector.Choice c, NormalizedPrompt np, SelectRequest req, BookingSpec b) {
    return new Booker.Admission(b.id(), c.rank(), np, req.expectedOutputTokens(), b.track(),
        c.effectivePrefillTokens(), b.session(), req.selectionId() != null);
  }

  /** Chooses now, or parks the request until {@link #attemptLocked} succeeds for it. */
  private CompletionStage<Selector.Choice> choose(Partition p, Partition.Members m, RouterConfig cfg,
      NormalizedPrompt np, SelectRequest req, WorkerRank bound, BookingSpec booking, CompletionStage<?> gone) {
    OverlapScores ev = p.eventOverlap(np.blockHashes());
    RouterQueueing.Waiter w;
    synchronized (p.lock) {
      Selector.Choice c = attemptLocked(p, m, cfg, np, req, bound, ev, booking);
      if (c != null) {
        return CompletableFuture.completedFuture(c);
      }
      Partition.Members cur = p.members();
      long uncached = Selector.bestUncachedLocked(p, cur, cfg, np, selector.filter(cur, req, bound), ev);
      w = queueing.parkLocked(p, req, np.isl(), uncached, System.nanoTime(),
          () -> attemptLocked(p, m, cfg, np, req, bound, null, booking));
    }
    if (gone != null) {
      gone.thenRun(() -> queueing.cancel(p, w, System.nanoTime()));
    }
    if (shuttingDown) {
      queueing.rejectAll(p, System.nanoTime(), "selection service is shutting down");
    }
    return RouterQueueing.served(w);
  }

  private CompletionStage<Selection> selectOnly(Partition p, Partition.Members m, RouterConfig cfg,
      NormalizedPrompt np, SelectRequest req, WorkerRank bound, String session, CompletionStage<?> gone) {
    boolean track = cfg.trackPrefillTokens();
    return choose(p, m, cfg, np, req, bound, null, gone).thenCompose(c -> {
      Selection s = Selector.response(p, cfg, np, req, c, req.selectionId(), false, track);
      if (req.selectionId() == null) {
        return CompletableFuture.completedFuture(s);
      }
      PendingSelection ps = new PendingSelection(c.rank(), np, c.effectivePrefillTokens(),
          req.expectedOutputTokens(), track, session);
      return pending.put(new PendingKey(p.key, req.selectionId()), ps, ps.approximateBytes(req.selectionId(), p.key))
          .thenApply(g -> s);
    });
  }

  /**
   * Chooses and admits under the partition lock (waiting in the router queue when every rank is
   * busy), then binds the session expecting {@code bound}. When another booking bound the session
   * first, the admission is undone and the choice made again with the winner as the binding (once;
   * a second loss answers 503).
   */
  private CompletionStage<Selection> selectAndBook(Partition p, Partition.Members m, RouterConfig cfg,
      NormalizedPrompt np, SelectRequest req, String id, String session, WorkerRank bound, boolean retried,
      CompletionStage<?> gone) {
    boolean track = cfg.trackPrefillTokens();
    BookingSpec spec = new BookingSpec(id, session, track);
    return choose(p, m, cfg, np, req, bound, spec, gone).thenCompose(c -> {
      Booker.Admission a = admission(c, np, req, spec);
      return booker.bind(p, a, bound).handle((won, err) -> {
        if (err != null) {
          booker.unadmit(p, id);
          return CompletableFuture.<Selection>failedFuture(SelectionException.unwrap(err));
        }
        if (!won.equals(c.rank())) {
          booker.unadmit(p, id);
          if (retried) {
            return CompletableFuture.<Selection>failedFuture(SelectionException.notReady(
                "session " + session + " is being bound by concurrent requests; retry"));
          }
          return selectAndBook(p, m, cfg, np, req, id, session, won, true, gone);
        }
        return booker.commit(p, a, c.members().blockSize())
            .thenApply(v -> Selector.response(p, cfg, np, req, c, id, true, track));
      }).thenCompose(s -> s);
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
    if (!Objects.equals(cur.blockSize(), hashedWith.blockSize()) || !Objects.equals(cur.eagle(), hashedWith.eagle())) {
      throw SelectionException.notReady("the block size of " + p.key + " changed during the selection; retry");
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

  Partition readyPartition(PartitionKey key) {
    if (shuttingDown) {
      throw SelectionException.notReady("selection service is shutting down");
    }
    String held = hold.get();
    if (held != null) {
      throw SelectionException.notReady(held);
    }
    Partition p = registry.partition(key);
    if (p == null || !p.members().ready()) {
      if (registry.schedulableCount() == 0) {
        throw SelectionException.notReady("no schedulable workers are available");
      }
      throw SelectionException.notReady("no schedulable workers for " + key);
    }
    return p;
  }

  // ---- reservations ----

  /** {@code POST /reservations}: the explicit form when a worker id is present, else a cached replay. */
  public CompletionStage<Reservation> reserve(ReservationRequest req) {
    return attempt(() -> {
      if (req.selectionId() == null || req.selectionId().isEmpty()) {
        throw SelectionException.unprocessable("missing field `selection_id`");
      }
      Reservations r = new Reservations(this, bookings, booker, pending, affinity, settings.router(), rng);
      return req.explicit() ? r.explicit(req) : r.replay(req);
    });
  }

  /**
   * {@code POST /reservations/{id}/prefill_complete}. A booking this node does not hold goes to
   * the {@link LifecycleForwarder} (in a cluster, to the node that booked it).
   */
  public CompletionStage<Void> prefillComplete(String id) {
    return attempt(() -> bookings.holds(id) ? prefillCompleteLocal(id)
        : forward(new LifecycleStep.PrefillComplete(id)));
  }

  private CompletionStage<Void> prefillCompleteLocal(String id) {
    return attempt(() -> {
      Bookings.Booking b = bookings.booking(id);
      Partition p = registry.partition(b.partition());
      boolean ok = false;
      if (p != null) {
        synchronized (p.lock) {
          ok = p.load.markPrefillComplete(id);
        }
      }
      if (!ok) {
        dropStale(id, b);
      }
      drain(p);
      return loadSync.publish(new LoadEvent.PrefillCompleted(b.partition(), id));
    });
  }

  /**
   * {@code POST /reservations/{id}/output_block}: one more decode block (accounted by the node
   * that holds the booking only; a booking held elsewhere goes to the {@link LifecycleForwarder}).
   */
  public CompletionStage<Void> outputBlock(String id, Double decayFraction) {
    return attempt(() -> {
      if (decayFraction != null && !(decayFraction >= 0.0 && decayFraction <= 1.0)) {
        throw SelectionException.badRequest("decay_fraction must be in [0.0, 1.0], got " + decayFraction);
      }
      return bookings.holds(id) ? outputBlockLocal(id, decayFraction)
          : forward(new LifecycleStep.OutputBlock(id, decayFraction));
    });
  }

  private CompletionStage<Void> outputBlockLocal(String id, Double decayFraction) {
    return attempt(() -> {
      if (decayFraction != null && !(decayFraction >= 0.0 && decayFraction <= 1.0)) {
        throw SelectionException.badRequest("decay_fraction must be in [0.0, 1.0], got " + decayFraction);
      }
      Bookings.Booking b = bookings.booking(id);
      Partition p = registry.partition(b.partition());
      boolean ok = false;
      if (p != null) {
        synchronized (p.lock) {
          ok = p.load.addOutputBlock(id, decayFraction);
        }
      }
      if (!ok) {
        dropStale(id, b);
      }
      return CompletableFuture.completedFuture(null);
    });
  }

  /** A booking whose load row is gone (expired meanwhile): drop it and answer 404. */
  private void dropStale(String id, Bookings.Booking b) {
    if (bookings.remove(id, b)) {
      booker.release(b.partition().toString(), b.sessionId(), id);
    }
    throw SelectionException.notFound("reservation " + id + " not found");
  }

  /**
   * {@code DELETE /reservations/{id}}: frees the booking and its session lease. A booking this
   * node does not hold goes to the {@link LifecycleForwarder} (in a cluster, to the node that
   * booked it).
   */
  public CompletionStage<Void> free(String id) {
    return attempt(() -> bookings.holds(id) ? freeLocal(id) : forward(new LifecycleStep.Free(id)));
  }

  /**
   * Applies a lifecycle step another node forwarded to this one (see {@link LifecycleForwarder}):
   * exactly as the local call, and never forwarded again (404 when this node does not hold it).
   */
  public CompletionStage<Void> applyForwarded(LifecycleStep step) {
    if (step instanceof LifecycleStep.PrefillComplete c) {
      return prefillCompleteLocal(c.id());
    }
    if (step instanceof LifecycleStep.OutputBlock o) {
      return outputBlockLocal(o.id(), o.decayFraction());
    }
    return freeLocal(step.id());
  }

  /** A step for a booking this node does not hold: to its origin as this node's load view knows it. */
  private CompletionStage<Void> forward(LifecycleStep step) {
    if (lifecycle == LifecycleForwarder.LOCAL) {
      throw SelectionException.notFound("reservation " + step.id() + " not found");
    }
    return lifecycle.forward(peers.originOf(step.id()), step);
  }

  private CompletionStage<Void> freeLocal(String id) {
    return attempt(() -> {
      Bookings.Booking b = bookings.booking(id);
      Partition p = registry.partition(b.partition());
      boolean mine;
      if (p != null) {
        synchronized (p.lock) {
          mine = bookings.remove(id, b);
          if (mine) {
            p.load.free(id);
          }
        }
      } else {
        mine = bookings.remove(id, b);
      }
      if (!mine) {
        throw SelectionException.notFound("reservation " + id + " not found");
      }
      booker.release(b.partition().toString(), b.sessionId(), id);
      kvc.released(id);
      drain(p);
      return loadSync.publish(new LoadEvent.Freed(b.partition(), id));
    });
  }

  /** Number of live bookings (reservation index rows). */
  public int bookingCount() {
    return bookings.size();
  }

  /** Cached selections awaiting a replay, as this process holds them. */
  public int pendingSelections() {
    return pending.size();
  }

  /**
   * Session bindings, as this node knows them ({@link SessionAffinity#size}: exact on a single
   * node, the cluster table's last counted size on a clustered one); 0 when session affinity is
   * off.
   */
  public int sessionCount() {
    return affinity == null ? 0 : affinity.size();
  }

  /**
   * The event-driven primary index of a partition, for KV-event ingestion; null when the
   * partition does not exist or the service runs in approximate mode.
   */
  public BlockIndex eventIndex(PartitionKey key) {
    Partition p = registry.partition(key);
    return p == null || p.approximate != null ? null : p.primary;
  }

  /**
   * Replays recovered index entries (a peer's {@code /dump}) into a partition's event-driven
   * index, creating the partition with the dump's block size when needed. Returns the number of
   * entries stored, or -1 when the partition exists with another block size or the service runs
   * in approximate mode. Runs before KV-event ingestion starts.
   */
  public long restoreIndex(PartitionKey key, int blockSize, List<StoredBlock> blocks) {
    if (!settings.router().useKvEvents()) {
      return -1;
    }
    Partition p = registry.ensurePartition(key, blockSize);
    if (p == null) {
      return -1;
    }
    long n = 0;
    for (var b : blocks) {
      if (p.primary.store(b.rank(), b.tier(), b.hasParent(), b.parentExternalHash(),
          new long[] {b.externalHash()}, new long[] {b.localHash()})) {
        n++;
      }
    }
    return n;
  }

  // ---- housekeeping ----

  /**
   * Periodic housekeeping: frees requests past the active-request expiry, expires approximate
   * and predicted index entries and idle session bindings. Returns the number of freed requests.
   */
  public int expire() {
    int n = 0;
    List<LoadEvent> freed = new ArrayList<>();
    for (Partition p : registry.partitions()) {
      synchronized (p.lock) {
        for (String id : p.load.expire()) {
          Bookings.Booking b = bookings.drop(id);
          if (b != null) {
            booker.release(p.key.toString(), b.sessionId(), id);
            freed.add(new LoadEvent.Freed(p.key, id));
          }
          kvc.released(id);
          n++;
        }
        p.expire();
      }
    }
    freed.forEach(loadSync::publish);
    drainAll();
    if (affinity != null) {
      affinity.sweep();
    }
    return n;
  }

  // ---- peers (cluster) ----

  /**
   * Applies a lifecycle step that peer {@code peerId} published for one of its own bookings,
   * without publishing it again. A {@code Booked} is admitted (tagged with the peer as origin)
   * when its rank is schedulable here with the same block size and the id is not active yet; a
   * {@code PrefillCompleted} or {@code Freed} applies only to a request of that origin and then
   * serves the partition's router queue exactly as a local one does. Anything else is ignored.
   *
   * @return whether the step changed this node's load
   */
  public boolean applyPeerLoad(String peerId, LoadEvent event) {
    return peers.apply(peerId, event);
  }

  /**
   * The committed bookings this node owns, as its peers need them to reconcile ({@link #reconcile}).
   * Takes each partition's lock in turn, O(active requests).
   */
  public io.kvselect.core.load.LoadDigest loadDigest() {
    return peers.digest();
  }

  /**
   * Makes this node's view of {@code peerId}'s bookings equal to its digest: bookings of that
   * origin absent from the digest (or on another rank) are freed, prefills the digest shows
   * complete are completed, missing bookings are admitted as by {@link #applyPeerLoad}. Freed
   * capacity serves the router queues. Bookings of other origins are never touched.
   */
  public io.kvselect.core.load.LoadDigest.Outcome reconcile(String peerId, io.kvselect.core.load.LoadDigest digest) {
    return peers.reconcile(peerId, digest);
  }

  /** Frees every booking of {@code peerId} (it left the cluster); returns how many. */
  public int releasePeer(String peerId) {
    return peers.releasePeer(peerId);
  }

  /**
   * Applies a catalog change a peer published (its {@code POST/PATCH/DELETE /workers}) through
   * the catalog writer, without publishing it again: listeners (KV-event subscriptions) follow,
   * bookings on dropped ranks are released, router queues are served. A change not newer than the
   * version this node holds for the worker ({@link io.kvselect.core.catalog.CatalogVersion}: last
   * writer wins, a removal is remembered for 10 min) is ignored; an upsert identical to the
   * current registration and the removal of an unknown worker record the version and change
   * nothing else. Completes with
   * whether the catalog changed; fails (changing nothing) when the spec is refused here.
   */
  public CompletionStage<Boolean> applyPeerCatalog(CatalogSync.CatalogChange change) {
    return attempt(() -> peers.applyCatalog(change));
  }

  /**
   * An order-independent hash of the catalog's workers and their versions: equal on two nodes
   * that hold the same registrations at the same versions (a peer's differing digest means one
   * of them missed a change; see {@link #catalogState}).
   */
  public long catalogDigest() {
    return registry.catalogDigest();
  }

  /**
   * The whole catalog as versioned changes (an upsert per worker, a removal per one removed in
   * the last 10 min), for a peer whose digest differs: applying them with {@link
   * #applyPeerCatalog} keeps, per worker, the newer of the two nodes' versions.
   */
  public java.util.List<CatalogSync.CatalogChange> catalogState() {
    return registry.catalogState();
  }

  /** Serves what a partition's freed capacity allows from its router queue. */
  private void drain(Partition p) {
    queueing.drain(p, System.nanoTime());
  }

  /** After a catalog change or expiry: every partition's queue gets a chance. */
  private void drainAll() {
    for (Partition p : registry.partitions()) {
      drain(p);
    }
  }

  RandomGenerator rng() {
    return rng;
  }

  /** Runs {@code body}, turning a synchronous throw into a failed stage. */
  static <T> CompletionStage<T> attempt(Supplier<CompletionStage<T>> body) {
    try {
      return body.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
