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
  private final RandomGenerator rng;
  private final WorkerRegistry registry;
  private final PendingSelectionCache<PendingKey, PendingSelection> pending;
  private final SessionAffinity affinity;
  private final Bookings bookings;
  private final Selector selector;
  private final Inspection inspection;
  private volatile boolean shuttingDown;

  SelectionService(ServiceSettings settings, Clock clock, RandomGenerator rng) {
    this.settings = settings;
    this.rng = rng;
    this.registry = new WorkerRegistry(settings, clock);
    this.pending = new PendingSelectionCache<>(clock, settings.selectionCacheTtl(),
        settings.selectionCacheMaxEntries(), settings.selectionCacheMaxBytes());
    this.affinity = settings.sessionAffinityTtl() == null
        ? null : new LocalSessionAffinity(clock, settings.sessionAffinityTtl());
    this.selector = new Selector(rng);
    this.bookings = new Bookings(settings, pending, affinity, selector, rng, this::readyPartition);
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
      return registry.upsert(spec, bookings::dropBooking);
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
          bookings::dropBooking);
    }
  }

  /** {@code DELETE /workers/{id}}: removes the worker, its blocks and its bookings. */
  public WorkerRecord deleteWorker(long workerId) {
    synchronized (lock) {
      WorkerRecord removed = registry.remove(workerId, bookings::dropBooking);
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
        bookings.requireFree(id);
      }
      RouterConfig cfg = settings.router().with(req.override());
      NormalizedPrompt np = PromptNormalizer.normalize(req.prompt(), p.blockSize, p.eagle,
          cfg.assumeKvReuse(), true, rng);
      String session = sessionOf(req.effectiveSessionId());
      WorkerRank bound = session == null ? null : affinity.lookup(p.key.toString(), session).orElse(null);
      Selector.Choice c = selector.choose(p, cfg, np, req, bound);
      boolean track = cfg.trackPrefillTokens();
      if (reserve) {
        bookings.book(p, id, c.rank(), np, req.expectedOutputTokens(), track, c.effectivePrefillTokens(), session);
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
      return req.explicit() ? bookings.reserveExplicit(req) : bookings.replay(req);
    }
  }

  /** {@code POST /reservations/{id}/prefill_complete}. */
  public void prefillComplete(String id) {
    synchronized (lock) {
      Bookings.Booking b = bookings.booking(id);
      Partition p = registry.partition(b.partition());
      if (p == null || !p.load.markPrefillComplete(id)) {
        bookings.dropBooking(id);
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
      Bookings.Booking b = bookings.booking(id);
      Partition p = registry.partition(b.partition());
      if (p == null || !p.load.addOutputBlock(id, decayFraction)) {
        bookings.dropBooking(id);
        throw SelectionException.notFound("reservation " + id + " not found");
      }
    }
  }

  /** {@code DELETE /reservations/{id}}: frees the booking and its session lease. */
  public void free(String id) {
    synchronized (lock) {
      Bookings.Booking b = bookings.booking(id);
      Partition p = registry.partition(b.partition());
      if (p != null) {
        p.load.free(id);
      }
      bookings.dropBooking(id);
    }
  }

  /** Number of live bookings (reservation index rows). */
  public int bookingCount() {
    synchronized (lock) {
      return bookings.size();
    }
  }

  /**
   * The event-driven primary index of a partition, for KV-event ingestion; null when the
   * partition does not exist or the service runs in approximate mode.
   */
  public io.kvselect.core.index.BlockIndex eventIndex(PartitionKey key) {
    synchronized (lock) {
      Partition p = registry.partition(key);
      return p == null || p.approximate != null ? null : p.primary;
    }
  }

  /**
   * Replays recovered index entries (a peer's {@code /dump}) into a partition's event-driven
   * index, creating the partition with the dump's block size when needed. Returns the number of
   * entries stored, or -1 when the partition exists with another block size or the service runs
   * in approximate mode.
   */
  public long restoreIndex(PartitionKey key, int blockSize, List<io.kvselect.core.index.StoredBlock> blocks) {
    synchronized (lock) {
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
          bookings.dropBooking(id);
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

  public int pendingSelections() {
    synchronized (lock) {
      return pending.size();
    }
  }
}
