// Over 400 lines: the embedded API, one delegating method per public call with its contract in
// Javadoc.
package io.kvselect.core.service;

import io.kvselect.core.catalog.CatalogListener;
import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.kvc.KvcMetrics;
import io.kvselect.core.kvc.KvcState;
import io.kvselect.core.load.LoadDigest;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.core.select.PolicyRegistry;
import io.kvselect.core.select.SelectionPipeline;
import io.kvselect.core.session.SessionAffinity;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;

/**
 * The selection service without transport: worker catalog, selection, reservations and their
 * lifecycle, peers, inspection. This is the embedded Java API (build it with
 * {@link SelectionServiceBuilder}); the HTTP and event-bus adapters call exactly these methods.
 *
 * <p>A facade: it writes the catalog itself and hands everything else to one part each, built
 * once here:
 * <ul>
 *   <li>{@link SelectionFlow}: {@code /select} and {@code /select_and_reserve} (the policy's
 *       stages from the {@link PolicyRegistry}, filter -> pick -> admission, queue parking, bind
 *       retry);
 *   <li>{@link ReservationLifecycle}: {@code /reservations}, prefill, output, free, expiry and
 *       forwarding of steps for bookings held elsewhere;
 *   <li>{@link PeerEntryPoints}: what peers ask (their load steps, digests, death, catalog
 *       changes, forwarded steps);
 *   <li>{@link Inspection}: the read-only views.
 * </ul>
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
 * are serialized by the catalog lock ({@link WorkerRegistry}); the shutting-down flag and the
 * hold by {@link ServiceGate}; prompt hashing, index lookups and response building run outside
 * every lock. See {@code docs/design.md} for the table of state, owners and readers.
 */
public final class SelectionService {

  private final ServiceSettings settings;
  private final WorkerRegistry registry;
  private final PendingStore<PendingKey, PendingSelection> pending;
  private final SessionAffinity affinity;
  private final CatalogSync catalogSync;
  private final ServiceGate gate;
  private final Booker booker;
  private final RouterQueueing queueing;
  private final SelectionFlow flow;
  private final ReservationLifecycle lifecycle;
  private final PeerEntryPoints peers;
  private final Inspection inspection;
  private final KvcSelection kvc;
  private final List<DispatchStage> stages;

  SelectionService(
      ServiceSettings settings,
      Clock clock,
      RandomGenerator rng,
      SelectionPipeline pipeline,
      PolicyRegistry policies,
      KvcSelection kvc,
      SessionAffinity affinity,
      PendingStore<PendingKey, PendingSelection> pending,
      LoadSync loadSync,
      CatalogSync catalogSync,
      QueueConfig queueConfig,
      Duration queueTimeout,
      LifecycleForwarder forwarder,
      Function<Function<PartitionKey, BlockIndex>, IndexShards> indexShards) {
    this.settings = settings;
    this.pending = pending;
    this.affinity = affinity;
    this.catalogSync = catalogSync;
    this.kvc = kvc;
    this.stages = policies.stages(DispatchStage.class);
    // every partition's event index also feeds the KVC admission model (what each decode worker
    // holds)
    ServiceSettings observed =
        new ServiceSettings(
            settings.router(),
            settings.sessionAffinityTtl(),
            settings.selectionCacheTtl(),
            settings.selectionCacheMaxEntries(),
            settings.selectionCacheMaxBytes(),
            () -> kvc.observed(settings.eventIndexFactory().get()));
    this.registry = new WorkerRegistry(observed, clock, queueConfig);
    this.gate = new ServiceGate(registry);
    this.queueing = new RouterQueueing(queueTimeout);
    Bookings bookings = new Bookings();
    this.booker = new Booker(bookings, affinity, pending, loadSync, queueing::drain);
    this.flow =
        new SelectionFlow(
            settings,
            rng,
            gate,
            policies,
            new Selector(pipeline, rng),
            queueing,
            bookings,
            booker,
            pending,
            affinity,
            indexShards.apply(this::eventIndex));
    this.lifecycle =
        new ReservationLifecycle(
            settings, rng, registry, gate, bookings, booker, pending, affinity, loadSync, forwarder,
            queueing, policies);
    this.peers = new PeerEntryPoints(registry, bookings, affinity, queueing, lifecycle);
    this.inspection = new Inspection(settings, rng, registry);
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

  /** The session table this service books through, or null without session affinity. */
  public SessionAffinity sessionAffinity() {
    return affinity;
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

  // ---- workers (the catalog writer) ----

  /** {@code POST /workers}: inserts or fully replaces a worker record. */
  public CompletionStage<WorkerRecord> upsertWorker(WorkerSpec spec) {
    return attempt(
        () -> {
          WorkerRegistry.Applied a = registry.upsertLocal(spec, lifecycle.droppedBookings());
          queueing.drainAll(registry.partitions());
          return published(a.record(), a.change());
        });
  }

  /**
   * {@code PATCH /workers/{id}}: applies {@code patch} to the current registration (under the
   * catalog lock, so concurrent patches compose). {@code patch} validates and may throw; it must
   * be pure.
   */
  public CompletionStage<WorkerRecord> patchWorker(long workerId, UnaryOperator<WorkerSpec> patch) {
    return attempt(
        () -> {
          WorkerRegistry.Applied a =
              registry.patchLocal(workerId, patch, lifecycle.droppedBookings());
          queueing.drainAll(registry.partitions());
          return published(a.record(), a.change());
        });
  }

  /** {@code DELETE /workers/{id}}: removes the worker, its blocks and its bookings. */
  public CompletionStage<WorkerRecord> deleteWorker(long workerId) {
    return attempt(
        () -> {
          WorkerRegistry.Applied a = registry.removeLocal(workerId, lifecycle.droppedBookings());
          for (DispatchStage s : stages) {
            s.removeWorker(a.record());
          }
          queueing.drainAll(registry.partitions());
          CompletionStage<Void> unbound =
              affinity == null
                  ? CompletableFuture.completedFuture(null)
                  : affinity.removeWorker(workerId);
          return unbound.thenCompose(v -> published(a.record(), a.change()));
        });
  }

  private CompletionStage<WorkerRecord> published(
      WorkerRecord r, CatalogSync.CatalogChange change) {
    return catalogSync.publish(change).thenApply(v -> r);
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
    return new ReadyStatus(gate.ready(n), n, registry.all());
  }

  /**
   * Refuses new selections (503 with the reason) while {@code reason} answers non-null: a
   * clustered node fenced after a pause ({@code io.kvselect.core.budget.PauseFence}). Lifecycle
   * calls for existing bookings are not held. Set once by the node's wiring.
   */
  public void hold(Supplier<String> reason) {
    gate.hold(reason);
  }

  /**
   * Where a router queue's drain continues after its first {@value RouterQueueing#SLICE} served
   * requests: a node gives an executor off its event loops (the worker pool), so a capacity
   * change that wakes thousands of parked requests never holds, or starves, an event loop for
   * the whole backlog. Without one (embedding), the slices run in a loop on the calling thread. Set
   * once by the node's wiring, before requests arrive.
   */
  public void continueQueuesOn(Executor executor) {
    queueing.continueOn(Objects.requireNonNull(executor));
  }

  /** Marks the service as shutting down: {@code /ready} turns false and selections fail with 503. */
  public void shutdown() {
    gate.shutdown();
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
    return attempt(
        () -> {
          WorkerRecord r = registry.setUnreachable(workerId, reason, lifecycle.droppedBookings());
          queueing.drainAll(registry.partitions());
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
  public CompletionStage<Selection> select(
      SelectRequest req, boolean reserve, CompletionStage<?> gone) {
    return flow.select(req, reserve, gone);
  }

  /** The KVC-Router's state (the cluster's when clustered); for metrics and {@code /cluster}. */
  public KvcState kvcState() {
    return kvc.state();
  }

  /**
   * What the built-in KVC admission model accounts on decode worker rank {@code d} now (for
   * tracing a decision: {@code bin/kvselect-sim --dump-requests}).
   */
  public io.kvselect.core.kvc.KvcAccount kvcAccount(io.kvselect.core.index.WorkerRank d) {
    return kvc.model().account(d);
  }

  /** KVC counters: requests by mode, rejects by reason, migrations, blacklist entries. */
  public KvcMetrics kvcMetrics() {
    return kvc.metrics();
  }

  // ---- reservations ----

  /** {@code POST /reservations}: the explicit form when a worker id is present, else a cached replay. */
  public CompletionStage<Reservation> reserve(ReservationRequest req) {
    return lifecycle.reserve(req);
  }

  /**
   * {@code POST /reservations/{id}/prefill_complete}. A booking this node does not hold goes to
   * the {@link LifecycleForwarder} (in a cluster, to the node that booked it).
   */
  public CompletionStage<Void> prefillComplete(String id) {
    return lifecycle.prefillComplete(id);
  }

  /**
   * {@code POST /reservations/{id}/output_block}: one more decode block (accounted by the node
   * that holds the booking only; a booking held elsewhere goes to the {@link LifecycleForwarder}).
   */
  public CompletionStage<Void> outputBlock(String id, Double decayFraction) {
    return lifecycle.outputBlock(id, decayFraction);
  }

  /**
   * {@code DELETE /reservations/{id}}: frees the booking and its session lease. A booking this
   * node does not hold goes to the {@link LifecycleForwarder} (in a cluster, to the node that
   * booked it).
   */
  public CompletionStage<Void> free(String id) {
    return lifecycle.free(id);
  }

  /** Number of live bookings (reservation index rows). */
  public int bookingCount() {
    return lifecycle.bookingCount();
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
    if (!settings.router().index().useKvEvents()) {
      return -1;
    }
    Partition p = registry.ensurePartition(key, blockSize);
    if (p == null) {
      return -1;
    }
    long n = 0;
    for (var b : blocks) {
      if (p.primary.store(
          b.rank(),
          b.tier(),
          b.hasParent(),
          b.parentExternalHash(),
          new long[] {b.externalHash()},
          new long[] {b.localHash()})) {
        n++;
      }
    }
    return n;
  }

  /**
   * Periodic housekeeping: frees requests past the active-request expiry, expires approximate
   * and predicted index entries and idle session bindings. Returns the number of freed requests.
   */
  public int expire() {
    return lifecycle.expire();
  }

  // ---- peers (cluster) ----

  /**
   * Applies a lifecycle step another node forwarded to this one (see {@link LifecycleForwarder}):
   * exactly as the local call, and never forwarded again (404 when this node does not hold it).
   */
  public CompletionStage<Void> applyForwarded(LifecycleStep step) {
    return peers.applyForwarded(step);
  }

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
  public LoadDigest loadDigest() {
    return peers.digest();
  }

  /**
   * Makes this node's view of {@code peerId}'s bookings equal to its digest: bookings of that
   * origin absent from the digest (or on another rank) are freed, prefills the digest shows
   * complete are completed, missing bookings are admitted as by {@link #applyPeerLoad}. Freed
   * capacity serves the router queues. Bookings of other origins are never touched.
   */
  public LoadDigest.Outcome reconcile(String peerId, LoadDigest digest) {
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
   * nothing else. Completes with whether the catalog changed; fails (changing nothing) when the
   * spec is refused here.
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
    return peers.catalogDigest();
  }

  /**
   * The whole catalog as versioned changes (an upsert per worker, a removal per one removed in
   * the last 10 min), for a peer whose digest differs: applying them with {@link
   * #applyPeerCatalog} keeps, per worker, the newer of the two nodes' versions.
   */
  public List<CatalogSync.CatalogChange> catalogState() {
    return peers.catalogState();
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
