package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;

/**
 * Observes bookings, so adapters can publish them (the event-bus API does). Called once per
 * booking, right after it entered the reservation table, by the thread that committed it (a
 * request's event loop, or a clustered store's thread) and under no lock. Implementations must
 * only hand off and never call back into the service; one that throws is ignored, so a listener
 * can never fail a booking.
 */
public interface BookingListener {

  void booked(Booked b);

  /**
   * One booking. {@code sessionId} is null without a session; {@code blockSize} is the
   * partition's block size the booking was admitted with.
   */
  record Booked(
      String selectionId,
      PartitionKey partition,
      WorkerRank rank,
      String sessionId,
      long islTokens,
      long effectivePrefillTokens,
      int blockSize) {

    /**
     * Prompt blocks the booking was credited as already cached on its rank:
     * {@code (islTokens - effectivePrefillTokens) / blockSize}, rounded down. With the default
     * weights these are the rank's device-tier overlap blocks; host and disk blocks count by
     * their cache-hit weights, and an explicit reservation's {@code effective_prefill_tokens}
     * is taken as given.
     */
    public long overlapBlocks() {
      return blockSize <= 0 ? 0 : Math.max(0, islTokens - effectivePrefillTokens) / blockSize;
    }
  }
}
