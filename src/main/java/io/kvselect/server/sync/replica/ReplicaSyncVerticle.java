package io.kvselect.server.sync.replica;

import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.bus.LocalCodec;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;

/**
 * The replica-sync verticle of a node with {@code --replica-sync-port}: owns its {@link ReplicaSync}
 * (Dynamo's ZMQ mesh) for the lifetime of the deployment. Deploying it binds the PUB (the
 * deployment fails when the port cannot be bound) and starts consuming the booking steps the
 * service sends to {@link LocalAddresses#REPLICA_LOAD} ({@link BusLoadSync}); undeploying it stops
 * the consumer, then the sync thread. The steps are encoded for the mesh on this verticle's
 * context, one at a time, in the order each sender sent them.
 */
public final class ReplicaSyncVerticle extends VerticleBase {

  private final ReplicaSync replica;
  private final SelectionService service;

  /** This verticle's context. */
  private MessageConsumer<LoadEvent> steps;

  /** The verticle of {@code replica}, applying what peers publish to {@code service}. */
  public ReplicaSyncVerticle(ReplicaSync replica, SelectionService service) {
    this.replica = replica;
    this.service = service;
  }

  @Override
  public Future<?> start() {
    LocalCodec.register(vertx);
    steps =
        vertx.eventBus().localConsumer(LocalAddresses.REPLICA_LOAD, m -> replica.publish(m.body()));
    return steps.completion().compose(v -> Future.fromCompletionStage(replica.start(service)));
  }

  @Override
  public Future<?> stop() {
    MessageConsumer<LoadEvent> c = steps;
    Future<Void> unregistered = c == null ? Future.succeededFuture() : c.unregister();
    return unregistered.eventually(() -> Future.fromCompletionStage(replica.stop()));
  }
}
