package io.kvselect.core.service;

/**
 * One lifecycle call on a booking, as {@link LifecycleForwarder} carries it to the node that holds
 * the booking: {@code prefill_complete}, {@code output_block} or {@code free}. Immutable.
 */
public sealed interface LifecycleStep {

  /** The booking's request id (its {@code selection_id}). */
  String id();

  /** {@code POST /reservations/{id}/prefill_complete}. */
  record PrefillComplete(String id) implements LifecycleStep {}

  /** {@code POST /reservations/{id}/output_block}; {@code decayFraction} is null or in [0, 1]. */
  record OutputBlock(String id, Double decayFraction) implements LifecycleStep {}

  /** {@code DELETE /reservations/{id}}. */
  record Free(String id) implements LifecycleStep {}
}
