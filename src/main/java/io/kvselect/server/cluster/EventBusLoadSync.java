package io.kvselect.server.cluster;

import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import java.util.concurrent.CompletionStage;

/**
 * {@link LoadSync} over the clustered event bus: each booking step becomes the next message of
 * this node's sequenced stream ({@link SyncStream}), published to every other node. The stage
 * completes once the step is handed to the event bus. Thread-safe; never blocks.
 */
public final class EventBusLoadSync implements LoadSync {

  private final SyncStream stream;

  EventBusLoadSync(SyncStream stream) {
    this.stream = stream;
  }

  @Override
  public CompletionStage<Void> publish(LoadEvent event) {
    String from = stream.nodeId();
    return stream.publishEncoded(seq -> SyncCodec.loadEnvelope(event, from, seq));
  }
}
