package io.kvselect.core.service;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.core.select.PolicyRegistry;
import io.kvselect.core.session.SessionAffinity;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import java.util.random.RandomGenerator;

/**
 * A reservation from booking to its end: {@code POST /reservations} (explicit or replayed, see
 * {@link Reservations}), {@code prefill_complete}, {@code output_block}, {@code DELETE}, expiry,
 * and the release of bookings on a rank the catalog dropped. A step for a booking this node does
 * not hold goes to the {@link LifecycleForwarder} (in a cluster, the node that booked it); the
 * {@code *Local} forms apply a step here and are what a forwarded step runs
 * ({@link PeerEntryPoints#applyForwarded}).
 *
 * <p>State and owners: none of its own. A booking's row in the reservation index
 * ({@link Bookings}) and its row in the partition's load change together under the partition's
 * lock; the session lease is released through the session seam after the lock; every policy's
 * {@link DispatchStage} is told when a booking ends; freed capacity serves the router queue.
 */
final class ReservationLifecycle {

  private final ServiceSettings settings;
  private final RandomGenerator rng;
  private final WorkerRegistry registry;
  private final ServiceGate gate;
  private final Bookings bookings;
  private final Booker booker;
  private final PendingStore<PendingKey, PendingSelection> pending;
  private final SessionAffinity affinity;
  private final LoadSync loadSync;
  private final LifecycleForwarder forwarder;
  private final RouterQueueing queueing;
  private final List<DispatchStage> stages;

  ReservationLifecycle(
      ServiceSettings settings,
      RandomGenerator rng,
      WorkerRegistry registry,
      ServiceGate gate,
      Bookings bookings,
      Booker booker,
      PendingStore<PendingKey, PendingSelection> pending,
      SessionAffinity affinity,
      LoadSync loadSync,
      LifecycleForwarder forwarder,
      RouterQueueing queueing,
      PolicyRegistry policies) {
    this.settings = settings;
    this.rng = rng;
    this.registry = registry;
    this.gate = gate;
    this.bookings = bookings;
    this.booker = booker;
    this.pending = pending;
    this.affinity = affinity;
    this.loadSync = loadSync;
    this.forwarder = forwarder;
    this.queueing = queueing;
    this.stages = policies.stages(DispatchStage.class);
  }

  /** See {@link SelectionService#reserve}. */
  CompletionStage<Reservation> reserve(ReservationRequest req) {
    return SelectionService.attempt(
        () -> {
          if (req.selectionId() == null || req.selectionId().isEmpty()) {
            throw SelectionException.unprocessable("missing field `selection_id`");
          }
          Reservations r =
              new Reservations(gate, bookings, booker, pending, affinity, settings.router(), rng);
          return req.explicit() ? r.explicit(req) : r.replay(req);
        });
  }

  /** See {@link SelectionService#prefillComplete}. */
  CompletionStage<Void> prefillComplete(String id) {
    return SelectionService.attempt(
        () ->
            bookings.holds(id)
                ? prefillCompleteLocal(id)
                : forward(new LifecycleStep.PrefillComplete(id)));
  }

  CompletionStage<Void> prefillCompleteLocal(String id) {
    return SelectionService.attempt(
        () -> {
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
          queueing.drain(p);
          return loadSync.publish(new LoadEvent.PrefillCompleted(b.partition(), id));
        });
  }

  /** See {@link SelectionService#outputBlock}. */
  CompletionStage<Void> outputBlock(String id, Double decayFraction) {
    return SelectionService.attempt(
        () -> {
          requireDecay(decayFraction);
          return bookings.holds(id)
              ? outputBlockLocal(id, decayFraction)
              : forward(new LifecycleStep.OutputBlock(id, decayFraction));
        });
  }

  CompletionStage<Void> outputBlockLocal(String id, Double decayFraction) {
    return SelectionService.attempt(
        () -> {
          requireDecay(decayFraction);
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

  private static void requireDecay(Double decayFraction) {
    if (decayFraction != null && !(decayFraction >= 0.0 && decayFraction <= 1.0)) {
      throw SelectionException.badRequest(
          "decay_fraction must be in [0.0, 1.0], got " + decayFraction);
    }
  }

  /** A booking whose load row is gone (expired meanwhile): drop it and answer 404. */
  private void dropStale(String id, Bookings.Booking b) {
    if (bookings.remove(id, b)) {
      booker.release(b.partition().toString(), b.sessionId(), id);
    }
    throw SelectionException.notFound("reservation " + id + " not found");
  }

  /** See {@link SelectionService#free}. */
  CompletionStage<Void> free(String id) {
    return SelectionService.attempt(
        () -> bookings.holds(id) ? freeLocal(id) : forward(new LifecycleStep.Free(id)));
  }

  CompletionStage<Void> freeLocal(String id) {
    return SelectionService.attempt(
        () -> {
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
          ended(id);
          queueing.drain(p);
          return loadSync.publish(new LoadEvent.Freed(b.partition(), id));
        });
  }

  /** A step for a booking this node does not hold: to its origin as this node's load view knows it. */
  private CompletionStage<Void> forward(LifecycleStep step) {
    if (forwarder == LifecycleForwarder.LOCAL) {
      throw SelectionException.notFound("reservation " + step.id() + " not found");
    }
    return forwarder.forward(originOf(step.id()), step);
  }

  /**
   * The peer that booked {@code id}, as this node's load view knows it; null when no partition
   * holds it as a peer's booking. Takes each partition's lock in turn, O(partitions).
   */
  private String originOf(String id) {
    for (Partition p : registry.partitions()) {
      synchronized (p.lock) {
        if (p.load.isActive(id)) {
          return p.load.originOf(id);
        }
      }
    }
    return null;
  }

  /**
   * Called (under the dropped rank's partition lock) for every request dropped with a rank:
   * removes its reservation row and releases its session lease.
   */
  BiConsumer<Partition, String> droppedBookings() {
    return (p, id) -> {
      Bookings.Booking b = bookings.drop(id);
      if (b != null) {
        booker.release(p.key.toString(), b.sessionId(), id);
      }
      ended(id);
    };
  }

  /** See {@link SelectionService#expire}. */
  int expire() {
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
          ended(id);
          n++;
        }
        p.expire();
      }
    }
    freed.forEach(loadSync::publish);
    queueing.drainAll(registry.partitions());
    if (affinity != null) {
      affinity.sweep();
    }
    return n;
  }

  /** Every policy's dispatch stage forgets what it promised for {@code id}. */
  private void ended(String id) {
    for (DispatchStage s : stages) {
      s.released(id);
    }
  }

  int bookingCount() {
    return bookings.size();
  }
}
