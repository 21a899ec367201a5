package io.kvselect.core.service;

import io.kvselect.core.error.SelectionException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where a lifecycle call goes when this node does not hold the booking (asynchronous seam). In a
 * cluster every node books on its own; a {@code prefill_complete}, {@code output_block} or
 * {@code free} that reaches another node is carried to the node that booked, which applies it
 * with {@link SelectionService#applyForwarded} and whose answer (success, or the failure with its
 * {@link io.kvselect.core.error.ErrorCode}) becomes this call's answer.
 *
 * <p>The service calls {@link #forward} only after it found no booking (nor a booking in progress)
 * with the id in its own reservation index, so a step is never forwarded twice: the receiving
 * node applies it locally and never forwards it again.
 *
 * <p>Implementations are thread-safe, never block the caller, and complete the stage with a
 * {@link SelectionException}: 404 when no node holds the booking.
 */
public interface LifecycleForwarder {

  /** A single node: nothing to forward to, a booking not held here is unknown (404). */
  LifecycleForwarder LOCAL =
      (origin, step) ->
          CompletableFuture.failedFuture(
              SelectionException.notFound("reservation " + step.id() + " not found"));

  /**
   * Applies {@code step} on the node that holds its booking.
   *
   * @param origin the node id this node's load view names as the booking's origin (a peer's
   *     booking it learned through load sync), or null when this node does not know it (the sync
   *     has not arrived yet, or there is no such booking): the implementation asks the peers,
   *     within a bounded time
   */
  CompletionStage<Void> forward(String origin, LifecycleStep step);
}
