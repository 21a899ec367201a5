package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.pending.PendingEntry;
import io.kvselect.core.pending.PendingSelectionCache;
import io.kvselect.core.session.LocalSessionAffinity;
import io.kvselect.core.session.SessionAffinity;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;

/**
 * The selection service without transport: worker catalog, selection, reservations and their
 * lifecycle, inspection. This is the embedded Java API (build it with
 * {@link SelectionServiceBuilder}); the HTTP and event-bus adapters call exactly these methods.
 *
 * <p>Threading: every public method is thread-safe. All state sits behind one monitor, held only
 * for in-memory work bounded by the request size and the number of ranks (no I/O, no waiting),
 * so calling it from an event loop is safe. Callers fail with {@link SelectionException}.
 */
public final class SelectionService {

  private final Object lock = new Object();
  private final ServiceSettings settings;
  private final Clock clock;
  private final RandomGenerator rng;
  private final WorkerRegistry registry;
  private final PendingSelectionCache<PendingKey, PendingSelection> pending;
  private final SessionAffinity affinity;
  private final Map<String, Booking> bookings = new HashMap<>();
  private final Selector selector;
  private final Inspection inspection;
  private volatile boolean shuttingDown;

  /** A booked reservation: where it landed and which session lease it holds. */
  record Booking(PartitionKey partition, WorkerRank rank, String sessionId) {}

  SelectionService(ServiceSettings settings, Clock clock, RandomGenerator rng) {
    this.settings = settings;
    this.clock = clock;
    this.rng = rng;
    this.registry = new WorkerRegistry(settings, clock);
    this.pending = new PendingSelectionCache<>(clock, settings.selectionCacheTtl(),
        settings.selectionCacheMaxEntries(), settings.selectionCacheMaxBytes());
    this.affinity = settings.sessionAffinityTtl() == null
        ? null : new LocalSessionAffinity(clock, settings.sessionAffinityTtl());
    this.selector = new Selector(rng);
    this.inspection = new Inspection(this);
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

  /** Registers a listener for catalog changes (called in order, under the service lock). */
  public void addCatalogListener(CatalogListener l) {
    synchronized (lock) {
      registry.addListener(l);
    }
  }

  // ---- workers ----

  /** {@code POST /workers}: inserts or fully replaces a worker record. */
  public WorkerRecord upsertWorker(WorkerSpec spec) {
    synchronized (lock) {
      return registry.upsert(spec, this::dropBooking);
    }
  }

  /** {@code PATCH /workers/{id}}: applies {@code patch} to the current registration. */
  public WorkerRecord patchWorker(long workerId, UnaryOperator<WorkerSpec> patch) {
    synchronized (lock) {
      WorkerRecord current = registry.worker(workerId);
      if (current == null) {
        throw SelectionException.notFound("worker " + Long.toUnsignedString(workerId) + " not found");
      }
      WorkerSpec next = patch.apply(current.spec());
      return registry.upsert(next.withPartition(current.spec().modelName(), current.spec().routingGroup()),
          this::dropBooking);
    }
  }

  /** {@code DELETE /workers/{id}}: removes the worker, its blocks and its bookings. */
  public WorkerRecord deleteWorker(long workerId) {
    synchronized (lock) {
      WorkerRecord removed = registry.remove(workerId, this::dropBooking);
      if (affinity != null) {
        affinity.removeWorker(workerId);
      }
      return removed;
    }
  }

  public WorkerRecord worker(long workerId) {
    synchronized (lock) {
      return registry.worker(workerId);
    }
  }

  public List<WorkerRecord> listWorkers(String modelName, String routingGroup) {
    synchronized (lock) {
      return registry.list(modelName, routingGroup);
    }
  }

  /** {@code GET /ready}: ready when not shutting down and at least one worker is schedulable. */
  public ReadyStatus ready() {
    synchronized (lock) {
      int n = registry.schedulableCount();
      return new ReadyStatus(!shuttingDown && n > 0, n, registry.all());
    }
  }

  /** Marks the service as shutting down: {@code /ready} turns false and selections fail with 503. */
  public void shutdown() {
    shuttingDown = true;
  }

  // ---- selection ----

  /**
   * {@code POST /select} ({@code reserve=false}: nothing is booked; a selection id caches the
   * booking inputs for a replayed reservation) or {@code POST /select_and_reserve}
   * ({@code reserve=true}: books atomically; a missing selection id is generated).
   */
  public Selection select(SelectRequest req, boolean reserve) {
    synchronized (lock) {
      Partition p = readyPartition(req.partition());
      String id = req.selectionId();
      if (reserve) {
        id = id != null ? id : UUID.randomUUID().toString();
        if (bookings.containsKey(id)) {
          throw SelectionException.conflict("selection " + id + " is already reserved or being reserved");
        }
      }
      RouterConfig cfg = settings.router().with(req.override());
      NormalizedPrompt np = PromptNormalizer.normalize(req.prompt(), p.blockSize, p.eagle,
          cfg.assumeKvReuse(), true, rng);
      String session = sessionOf(req.effectiveSessionId());
      WorkerRank bound = session == null ? null : affinity.lookup(p.key.toString(), session).orElse(null);
      Selector.Choice c = selector.choose(p, cfg, np, req, bound);
      boolean track = cfg.trackPrefillTokens();
      if (reserve) {
        book(p, id, c.rank(), np, req.expectedOutputTokens(), track, c.effectivePrefillTokens(), session);
      } else if (id != null) {
        PendingSelection ps = new PendingSelection(c.rank(), np, c.effectivePrefillTokens(),
            req.expectedOutputTokens(), track, session);
        pending.put(new PendingKey(p.key, id), ps, ps.approximateBytes(id, p.key));
      }
      return selector.response(p, cfg, np, req, c, id, reserve, track);
    }
  }

  private String sessionOf(String sessionId) {
    if (affinity == null || sessionId == null) {
      return null;
    }
    SessionAffinity.requireValidSessionId(sessionId);
    return sessionId;
  }

  private Partition readyPartition(PartitionKey key) {
    if (shuttingDown) {
      throw SelectionException.notReady("selection service is shutting down");
    }
    Partition p = registry.partition(key);
    if (p == null || !p.ready()) {
      if (registry.schedulableCount() == 0) {
        throw SelectionException.notReady("no schedulable workers are available");
      }
      throw SelectionException.notReady("no schedulable workers for " + key);
    }
    return p;
  }

  // ---- reservations ----

  /** {@code POST /reservations}: the explicit form when a worker id is present, else a cached replay. */
  public Reservation reserve(ReservationRequest req) {
    if (req.selectionId() == null || req.selectionId().isEmpty()) {
      throw SelectionException.unprocessable("missing field `selection_id`");
    }
    synchronized (lock) {
      return req.explicit() ? reserveExplicit(req) : replay(req);
    }
  }

  private Reservation reserveExplicit(ReservationRequest req) {
    String id = req.selectionId();
    pending.remove(new PendingKey(req.partition(), id));
    if (bookings.containsKey(id)) {
      throw SelectionException.conflict("selection " + id + " is already reserved or being reserved");
    }
    Partition p = readyPartition(req.partition());
    WorkerRecord w = p.schedulableWorker(req.workerId());
    int dpRank = req.dpRank() != null ? req.dpRank()
        : w != null ? w.spec().dataParallelStartRank() : 0;
    if (w == null || !w.hasRank(dpRank)) {
      throw SelectionException.notFound("schedulable worker " + Long.toUnsignedString(req.workerId())
          + " (dp_rank " + dpRank + ") not found for " + p.key);
    }
    RouterConfig cfg = settings.router().with(req.override());
    NormalizedPrompt np = PromptNormalizer.normalize(req.prompt(), p.blockSize, p.eagle,
        cfg.assumeKvReuse(), false, rng);
    Long eff = req.effectivePrefillTokens();
    if (eff != null && (eff < 0 || eff > np.isl())) {
      throw SelectionException.badRequest("effective_prefill_tokens (" + eff
          + ") must not exceed isl_tokens (" + np.isl() + ") and must not be negative");
    }
    boolean track = req.trackPrefillTokens() != null ? req.trackPrefillTokens()
        : eff != null || cfg.trackPrefillTokens();
    WorkerRank rank = new WorkerRank(w.workerId(), dpRank);
    long prefill = eff != null ? eff : selector.effectivePrefill(p, cfg, np, rank);
    book(p, id, rank, np, req.expectedOutputTokens(), track, prefill, null);
    return new Reservation(id, p.key, rank.workerId(), rank.dpRank(), w.spec().endpoint());
  }

  private Reservation replay(ReservationRequest req) {
    String id = req.selectionId();
    PendingKey key = new PendingKey(req.partition(), id);
    PendingEntry<PendingSelection> e = pending.peekEntry(key);
    if (e == null) {
      throw SelectionException.notFound("no pending selection " + id + " for " + req.partition()
          + " (expired, already used, or never selected)");
    }
    if (bookings.containsKey(id)) {
      throw SelectionException.conflict("selection " + id + " is already reserved or being reserved");
    }
    PendingSelection ps = e.value();
    Partition p = readyPartition(req.partition());
    WorkerRecord w = p.schedulableWorker(ps.rank().workerId());
    if (w == null || !w.hasRank(ps.rank().dpRank())) {
      throw SelectionException.notFound("schedulable worker " + Long.toUnsignedString(ps.rank().workerId())
          + " not found for " + p.key);
    }
    if (ps.sessionId() != null && affinity != null) {
      WorkerRank bound = affinity.lookup(p.key.toString(), ps.sessionId()).orElse(null);
      if (bound != null && !bound.equals(ps.rank()) && p.schedulableWorker(bound.workerId()) != null) {
        pending.removeIfGeneration(key, e.generation());
        throw SelectionException.badRequest("session " + ps.sessionId() + " moved to worker "
            + Long.toUnsignedString(bound.workerId()) + " after selection " + id);
      }
    }
    book(p, id, ps.rank(), ps.prompt(), ps.expectedOutputTokens(), ps.trackPrefillTokens(),
        ps.effectivePrefillTokens(), ps.sessionId());
    pending.removeIfGeneration(key, e.generation());
    return new Reservation(id, p.key, ps.rank().workerId(), ps.rank().dpRank(), w.spec().endpoint());
  }

  private void book(Partition p, String id, WorkerRank rank, NormalizedPrompt np, Long expectedOutput,
      boolean track, long prefillTokens, String session) {
    if (session != null) {
      affinity.bindAndLease(p.key.toString(), session, rank, id);
    }
    try {
      p.load.addRequest(id, rank, np.trackingHashes(), np.isl(), p.blockSize,
          expectedOutput == null ? null : (int) Math.min(Integer.MAX_VALUE, expectedOutput), track, prefillTokens);
    } catch (RuntimeException ex) {
      if (session != null) {
        affinity.releaseLease(p.key.toString(), session, id);
      }
      throw ex;
    }
    bookings.put(id, new Booking(p.key, rank, session));
    p.recordBooking(rank, np);
    pending.remove(new PendingKey(p.key, id));
  }

  /** {@code POST /reservations/{id}/prefill_complete}. */
  public void prefillComplete(String id) {
    synchronized (lock) {
      Booking b = booking(id);
      Partition p = registry.partition(b.partition());
      if (p == null || !p.load.markPrefillComplete(id)) {
        dropBooking(id);
        throw SelectionException.notFound("reservation " + id + " not found");
      }
    }
  }

  /** {@code POST /reservations/{id}/output_block}: one more decode block (local accounting only). */
  public void outputBlock(String id, Double decayFraction) {
    if (decayFraction != null && !(decayFraction >= 0.0 && decayFraction <= 1.0)) {
      throw SelectionException.badRequest("decay_fraction must be in [0.0, 1.0], got " + decayFraction);
    }
    synchronized (lock) {
      Booking b = booking(id);
      Partition p = registry.partition(b.partition());
      if (p == null || !p.load.addOutputBlock(id, decayFraction)) {
        dropBooking(id);
        throw SelectionException.notFound("reservation " + id + " not found");
      }
    }
  }

  /** {@code DELETE /reservations/{id}}: frees the booking and its session lease. */
  public void free(String id) {
    synchronized (lock) {
      Booking b = booking(id);
      Partition p = registry.partition(b.partition());
      if (p != null) {
        p.load.free(id);
      }
      dropBooking(id);
    }
  }

  private Booking booking(String id) {
    Booking b = bookings.get(id);
    if (b == null) {
      throw SelectionException.notFound("reservation " + id + " not found");
    }
    return b;
  }

  private void dropBooking(String id) {
    Booking b = bookings.remove(id);
    if (b != null && b.sessionId() != null && affinity != null) {
      affinity.releaseLease(b.partition().toString(), b.sessionId(), id);
    }
  }

  /** Number of live bookings (reservation index rows). */
  public int bookingCount() {
    synchronized (lock) {
      return bookings.size();
    }
  }

  // ---- housekeeping and inspection ----

  /**
   * Periodic housekeeping: frees requests past the active-request expiry, expires approximate
   * and predicted index entries and idle session bindings. Returns the number of freed requests.
   */
  public int expire() {
    synchronized (lock) {
      int n = 0;
      for (Partition p : registry.partitions()) {
        for (String id : p.load.expire()) {
          dropBooking(id);
          n++;
        }
        p.expire();
      }
      if (affinity != null) {
        affinity.sweep();
      }
      return n;
    }
  }

  /** Runs {@code f} under the service lock with read access to the partitions (inspection). */
  <T> T inspect(java.util.function.Function<WorkerRegistry, T> f) {
    synchronized (lock) {
      return f.apply(registry);
    }
  }

  RandomGenerator rng() {
    return rng;
  }

  Clock clock() {
    return clock;
  }

  Selector selector() {
    return selector;
  }

  public int pendingSelections() {
    synchronized (lock) {
      return pending.size();
    }
  }
}
