package io.kvselect.core.load;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where the selection service publishes the lifecycle of its bookings to other nodes: the
 * asynchronous seam of cluster-wide load. The service applies a step to its own partition first,
 * then publishes it; the stage completes when the step is handed to the transport (never when
 * peers applied it: load views converge, they are not consensus). {@link #LOCAL} is the single
 * node, which has no one to tell.
 *
 * <p>Threading: implementations are called from any thread, outside every partition lock, and
 * must not block.
 */
@FunctionalInterface
public interface LoadSync {

  /** The single-node implementation: every step is complete on return. */
  LoadSync LOCAL = e -> CompletableFuture.completedFuture(null);

  CompletionStage<Void> publish(LoadEvent event);
}
