package io.kvselect.server.cluster;

import io.kvselect.core.catalog.CatalogSync;
import java.util.concurrent.CompletionStage;

/**
 * {@link CatalogSync} over the clustered event bus: each applied catalog change becomes the next
 * message of this node's sequenced stream ({@link SyncStream}), so a peer applies it in the
 * order this node made it, and before any booking this node made on the worker afterwards.
 * Thread-safe; never blocks.
 */
public final class EventBusCatalogSync implements CatalogSync {

  private final SyncStream stream;

  EventBusCatalogSync(SyncStream stream) {
    this.stream = stream;
  }

  @Override
  public CompletionStage<Void> publish(CatalogChange change) {
    return stream.publish(SyncCodec.kind(change), () -> SyncCodec.catalog(change));
  }
}
