package io.kvselect.core.load;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;

/**
 * A lifecycle step of one booking, as the node that booked it publishes it to its peers
 * ({@link LoadSync}). Request ids are global, so a peer applies the same step to its own
 * {@link ActiveLoad} with the same arguments. Output blocks stay local, as in Dynamo.
 */
public sealed interface LoadEvent {

  PartitionKey partition();

  String requestId();

  /** A booking was admitted on {@code rank}; the fields are {@link ActiveLoad#addRequest}'s. */
  record Booked(
      PartitionKey partition,
      String requestId,
      WorkerRank rank,
      long[] trackingHashes,
      long isl,
      int blockSize,
      Integer expectedOutputTokens,
      boolean trackPrefill,
      long prefillTokens)
      implements LoadEvent {}

  /** The booking's prefill completed. */
  record PrefillCompleted(PartitionKey partition, String requestId) implements LoadEvent {}

  /** The booking was freed (by the client, an expiry, or its worker leaving). */
  record Freed(PartitionKey partition, String requestId) implements LoadEvent {}
}
