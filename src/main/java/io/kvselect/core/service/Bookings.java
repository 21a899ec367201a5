package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.pending.PendingEntry;
import io.kvselect.core.pending.PendingSelectionCache;
import io.kvselect.core.session.SessionAffinity;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * The reservation index and booking paths: explicit and replayed reservations, and the booking
 * step shared with {@code select_and_reserve}. A booking installs the load row, the reservation
 * row, the session lease and (approximate or predicted modes) the routing decision in the index.
 * Owned by the {@link SelectionService} lock.
 */
final class Bookings {

  /** A booked reservation: where it landed and which session lease it holds. */
  record Booking(PartitionKey partition, WorkerRank rank, String sessionId) {}

  private final ServiceSettings settings;
  private final PendingSelectionCache<PendingKey, PendingSelection> pending;
  private final SessionAffinity affinity;
  private final Selector selector;
  private final RandomGenerator rng;
  private final Function<PartitionKey, Partition> readyPartition;
  private final Map<String, Booking> bookings = new HashMap<>();

  Bookings(ServiceSettings settings, PendingSelectionCache<PendingKey, PendingSelection> pending,
      SessionAffinity affinity, Selector selector, RandomGenerator rng, Function<PartitionKey, Partition> readyPartition) {
    this.settings = settings;
    this.pending = pending;
    this.affinity = affinity;
    this.selector = selector;
    this.rng = rng;
    this.readyPartition = readyPartition;
  }

  boolean contains(String id) {
    return bookings.containsKey(id);
  }

  int size() {
    return bookings.size();
  }

  void requireFree(String id) {
    if (bookings.containsKey(id)) {
      throw SelectionException.conflict("selection " + id + " is already reserved or being reserved");
    }
  }

  Reservation reserveExplicit(ReservationRequest req) {
    String id = req.selectionId();
    pending.remove(new PendingKey(req.partition(), id));
    if (bookings.containsKey(id)) {
      throw SelectionException.conflict("selection " + id + " is already reserved or being reserved");
    }
    Partition p = readyPartition.apply(req.partition());
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

  Reservation replay(ReservationRequest req) {
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
    Partition p = readyPartition.apply(req.partition());
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

  void book(Partition p, String id, WorkerRank rank, NormalizedPrompt np, Long expectedOutput,
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

  Booking booking(String id) {
    Booking b = bookings.get(id);
    if (b == null) {
      throw SelectionException.notFound("reservation " + id + " not found");
    }
    return b;
  }

  void dropBooking(String id) {
    Booking b = bookings.remove(id);
    if (b != null && b.sessionId() != null && affinity != null) {
      affinity.releaseLease(b.partition().toString(), b.sessionId(), id);
    }
  }
}
