package io.kvselect.core.service;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.core.session.SessionAffinity;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The booking steps shared by {@code select_and_reserve} and both forms of
 * {@code /reservations}: admit the request into its partition's load, bind its session lease
 * (compare-and-bind, so concurrent first requests of one session agree on one rank), commit the
 * reservation row, publish the booking. A step that fails undoes the steps before it: the load
 * row is freed, the lease released, the id unclaimed.
 *
 * <p>Stateless apart from its collaborators; it takes a partition's lock only around the steps
 * that touch that partition, and never while it waits for a stage.
 */
final class Booker {

  private final Bookings bookings;
  private final SessionAffinity affinity;
  private final PendingStore<PendingKey, PendingSelection> pending;
  private final LoadSync loadSync;
  private final java.util.function.Consumer<Partition> capacityFreed;

  /** Registered once at wiring and read by every commit; copy-on-write, so any thread may read. */
  private final java.util.List<BookingListener> listeners =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  /** {@code capacityFreed} runs (outside the lock) after a step gave admitted load back. */
  Booker(
      Bookings bookings,
      SessionAffinity affinity,
      PendingStore<PendingKey, PendingSelection> pending,
      LoadSync loadSync,
      java.util.function.Consumer<Partition> capacityFreed) {
    this.bookings = bookings;
    this.affinity = affinity;
    this.pending = pending;
    this.loadSync = loadSync;
    this.capacityFreed = capacityFreed;
  }

  void addListener(BookingListener l) {
    listeners.add(l);
  }

  /**
   * One request's booking inputs, fixed once its rank is chosen. {@code clientId}: the client
   * named the id, so a pending selection may be cached under it (on any node); an id the service
   * generated never has one.
   */
  record Admission(
      String id,
      WorkerRank rank,
      NormalizedPrompt prompt,
      Long expectedOutputTokens,
      boolean trackPrefill,
      long prefillTokens,
      String sessionId,
      boolean clientId) {}

  /** Adds the request to the partition's load. Caller holds {@code p.lock}. */
  static void admitLocked(Partition p, Admission a, int blockSize) {
    Long out = a.expectedOutputTokens();
    p.load.addRequest(
        a.id(),
        a.rank(),
        a.prompt().trackingHashes(),
        a.prompt().isl(),
        blockSize,
        out == null ? null : (int) Math.min(Integer.MAX_VALUE, out),
        a.trackPrefill(),
        a.prefillTokens());
  }

  /** Takes an admitted request back out of the load (a later step failed). */
  void unadmit(Partition p, String id) {
    synchronized (p.lock) {
      p.load.free(id);
    }
    capacityFreed.accept(p);
  }

  /**
   * Binds the admission's session, expecting the binding to be {@code expected} (null: none);
   * completes with the binding in effect afterwards. Without a session, completes with the rank.
   */
  CompletionStage<WorkerRank> bind(Partition p, Admission a, WorkerRank expected) {
    if (a.sessionId() == null) {
      return CompletableFuture.completedFuture(a.rank());
    }
    return affinity.bindAndLease(p.key.toString(), a.sessionId(), expected, a.rank(), a.id());
  }

  /**
   * Turns the claim into a booking, records the decision in the approximate or predicted index,
   * drops a pending selection of the same id (when the client named the id) and publishes the
   * booking. Fails with 503 (and
   * releases the lease) when the rank left while the booking was being made.
   */
  CompletionStage<Void> commit(Partition p, Admission a, int blockSize) {
    boolean ok;
    synchronized (p.lock) {
      ok =
          p.load.rankOf(a.id()) != null
              && bookings.commit(a.id(), new Bookings.Booking(p.key, a.rank(), a.sessionId()));
      if (ok) {
        p.recordBooking(a.rank(), a.prompt());
      } else {
        p.load.free(a.id());
      }
    }
    if (!ok) {
      capacityFreed.accept(p);
      release(p.key.toString(), a.sessionId(), a.id());
      throw SelectionException.notReady(
          "worker "
              + Long.toUnsignedString(a.rank().workerId())
              + " left while reservation "
              + a.id()
              + " was being made");
    }
    if (!listeners.isEmpty()) {
      notifyBooked(
          new BookingListener.Booked(
              a.id(),
              p.key,
              a.rank(),
              a.sessionId(),
              a.prompt().isl(),
              a.prefillTokens(),
              blockSize));
    }
    Long out = a.expectedOutputTokens();
    LoadEvent.Booked e =
        new LoadEvent.Booked(
            p.key,
            a.id(),
            a.rank(),
            a.prompt().trackingHashes(),
            a.prompt().isl(),
            blockSize,
            out == null ? null : (int) Math.min(Integer.MAX_VALUE, out),
            a.trackPrefill(),
            a.prefillTokens());
    // a clustered pending store is a Hazelcast round trip: skipped when no entry can exist
    CompletionStage<Void> dropped =
        a.clientId()
            ? pending.remove(new PendingKey(p.key, a.id()))
            : CompletableFuture.completedFuture(null);
    return dropped.thenCompose(v -> loadSync.publish(e));
  }

  private void notifyBooked(BookingListener.Booked b) {
    for (BookingListener l : listeners) {
      try {
        l.booked(b);
      } catch (RuntimeException ignored) {
        // a listener must not fail a committed booking (see BookingListener)
      }
    }
  }

  /** Releases a session lease, if any (fire and forget: a lost release only delays idle expiry). */
  void release(String partition, String sessionId, String id) {
    if (sessionId != null && affinity != null) {
      affinity.releaseLease(partition, sessionId, id);
    }
  }
}
