package io.kvselect.server.sync.replica;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import java.util.HashMap;
import java.util.Map;

/**
 * This node's booking steps as Dynamo's replica wire carries them: a booking becomes an
 * {@code AddRequest}, its prefill completion and free name the rank and block size the booking
 * had, which only the booking step carries, so the rows of the bookings published and not yet
 * freed are kept here.
 *
 * <p>Owned by the {@link ReplicaSyncVerticle}'s context: {@link ReplicaSync#publish}, its only
 * caller, runs there.
 */
final class ReplicaSteps {

  /** Rank and block size of a booking this node published, for its later free or completion. */
  private record Booking(PartitionKey partition, WorkerRank rank, int blockSize) {}

  private final long routerId;
  private final Map<String, Booking> booked = new HashMap<>();

  ReplicaSteps(long routerId) {
    this.routerId = routerId;
  }

  /** The wire event of {@code e}, or null for a step of a booking this node did not publish. */
  ReplicaWire.SequenceEvent toWire(LoadEvent e) {
    PartitionKey p = e.partition();
    if (e instanceof LoadEvent.Booked b) {
      booked.put(b.requestId(), new Booking(p, b.rank(), b.blockSize()));
      return new ReplicaWire.SequenceEvent(
          p.modelName(),
          p.routingGroup(),
          b.blockSize(),
          b.requestId(),
          b.rank().workerId(),
          b.rank().dpRank(),
          ReplicaWire.Kind.ADD_REQUEST,
          b.trackingHashes(),
          b.trackPrefill(),
          b.expectedOutputTokens(),
          b.prefillTokens(),
          routerId,
          null);
    }
    boolean free = e instanceof LoadEvent.Freed;
    Booking bk = free ? booked.remove(e.requestId()) : booked.get(e.requestId());
    if (bk == null) {
      return null;
    }
    return new ReplicaWire.SequenceEvent(
        p.modelName(),
        p.routingGroup(),
        bk.blockSize(),
        e.requestId(),
        bk.rank().workerId(),
        bk.rank().dpRank(),
        free ? ReplicaWire.Kind.FREE : ReplicaWire.Kind.MARK_PREFILL_COMPLETED,
        null,
        false,
        null,
        null,
        routerId,
        null);
  }

  /** Bookings published and not yet freed. */
  int open() {
    return booked.size();
  }
}
