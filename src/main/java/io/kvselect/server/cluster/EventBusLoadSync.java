package io.kvselect.server.cluster;

import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * {@link LoadSync} over the clustered event bus: each booking step becomes the next message of
 * this node's sequenced stream ({@link SyncStream}), published to every other node. The stage
 * completes once the step is handed to the event bus. Thread-safe; never blocks.
 *
 * <p>While the cluster membership lists no other node, a step is neither encoded nor numbered
 * (counted in {@link #notSentAlone}): nobody could receive it, and encoding a booking's tracking
 * hashes was the largest cost a one-member cluster added to a booking. Nothing is lost for
 * good: a receiver asks a sender it hears for the first time for a digest of all its bookings, a
 * member this node was split from dropped this node's bookings and gets them back the same way,
 * and a step skipped in the moment a joiner is being listed here is repaired by the periodic
 * digest, within two reconcile intervals (see {@link PeerSync}; {@code LoadSyncAloneTest}).
 */
public final class EventBusLoadSync implements LoadSync {

  private final SyncStream stream;
  private final BooleanSupplier othersListed;

  /** Steps not published because no other node was listed; any thread. */
  final AtomicLong notSentAlone = new AtomicLong();

  EventBusLoadSync(SyncStream stream, BooleanSupplier othersListed) {
    this.stream = stream;
    this.othersListed = othersListed;
  }

  @Override
  public CompletionStage<Void> publish(LoadEvent event) {
    if (!othersListed.getAsBoolean()) {
      notSentAlone.incrementAndGet();
      return CompletableFuture.completedFuture(null);
    }
    String from = stream.nodeId();
    return stream.publishEncoded(seq -> SyncCodec.loadEnvelope(event, from, seq));
  }
}
