package io.kvselect.server.sync.replica;

import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.bus.LocalCodec;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.EventBus;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The selection service's side of Dynamo's replica sync: each booking step is sent to
 * {@link LocalAddresses#REPLICA_LOAD}, where {@link ReplicaSyncVerticle} (the owner of the replica
 * mesh) publishes it. Like every {@link LoadSync} it never blocks and completes once the step is
 * handed over; a step sent while no replica verticle is deployed (before the node starts, after it
 * stops) has no consumer and is dropped, as a step of a stopped replica sync always was.
 *
 * <p>Stateless apart from the event bus it sends on; callable from any thread.
 */
public final class BusLoadSync implements LoadSync {

  private static final CompletableFuture<Void> HANDED_OVER =
      CompletableFuture.completedFuture(null);

  private final EventBus bus;

  /** Sends on {@code vertx}'s event bus (registering {@link LocalCodec} there). */
  public BusLoadSync(Vertx vertx) {
    LocalCodec.register(vertx);
    this.bus = vertx.eventBus();
  }

  @Override
  public CompletionStage<Void> publish(LoadEvent event) {
    bus.send(LocalAddresses.REPLICA_LOAD, event, LocalCodec.options());
    return HANDED_OVER;
  }
}
