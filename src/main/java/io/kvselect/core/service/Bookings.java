package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The reservation index: which partition, rank and session lease every live booking holds,
 * keyed by the service-wide request id.
 *
 * <p>A booking is made in two steps so that an id is never booked twice and a failed booking
 * leaves nothing behind: {@link #claim} reserves the id (a 409 for a second claimant), the
 * caller admits the request into its partition's load and binds its session, then
 * {@link #commit} replaces the claim with the booking, or {@link #unclaim} gives the id back.
 *
 * <p>Ownership: the map is concurrent, so each operation is atomic on its own; a row's
 * transitions that must agree with a partition's load ({@link #commit}, and {@link #drop} when a
 * rank's requests are dropped) happen while that partition's lock is held, which makes "booked"
 * and "admitted into the load" change together.
 */
final class Bookings {

  /** A booked reservation: where it landed and which session lease it holds. */
  record Booking(PartitionKey partition, WorkerRank rank, String sessionId) {}

  /** The row of an id whose booking is in progress. */
  private static final Booking CLAIM = new Booking(null, null, null);

  private final ConcurrentHashMap<String, Booking> rows = new ConcurrentHashMap<>();

  /** Reserves {@code id} for a booking in progress; 409 if it is booked or being booked. */
  void claim(String id) {
    if (rows.putIfAbsent(id, CLAIM) != null) {
      throw SelectionException.conflict(
          "selection " + id + " is already reserved or being reserved");
    }
  }

  /** Gives back a claim that did not become a booking (no-op once committed or dropped). */
  void unclaim(String id) {
    rows.remove(id, CLAIM);
  }

  /**
   * Turns the claim on {@code id} into {@code booking}; false if the claim was dropped meanwhile
   * (its rank left). Caller holds the booking partition's lock.
   */
  boolean commit(String id, Booking booking) {
    return rows.replace(id, CLAIM, booking);
  }

  /** The live booking {@code id}; 404 when absent or still being made. */
  Booking booking(String id) {
    Booking b = rows.get(id);
    if (b == null || b == CLAIM) {
      throw SelectionException.notFound("reservation " + id + " not found");
    }
    return b;
  }

  /**
   * Removes the row of {@code id} (a booking, or a claim whose request was admitted and is now
   * dropped); returns the booking, or null for a claim or an unknown id.
   */
  Booking drop(String id) {
    Booking b = rows.remove(id);
    return b == CLAIM ? null : b;
  }

  /** Removes {@code id} only if it is still {@code booking}; true if it did. */
  boolean remove(String id, Booking booking) {
    return rows.remove(id, booking);
  }

  /** Whether {@code id} has a row here: a booking, or a booking in progress. */
  boolean holds(String id) {
    return rows.containsKey(id);
  }

  /** Whether {@code id} is a committed booking in {@code partition} (not a claim). */
  boolean isBooked(String id, PartitionKey partition) {
    Booking b = rows.get(id);
    return b != null && b != CLAIM && partition.equals(b.partition());
  }

  /** Number of live bookings (claims in progress excluded). O(rows). */
  int size() {
    int n = 0;
    for (Booking b : rows.values()) {
      n += b == CLAIM ? 0 : 1;
    }
    return n;
  }
}
