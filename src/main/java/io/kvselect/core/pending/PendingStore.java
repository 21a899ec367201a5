package io.kvselect.core.pending;

import java.util.concurrent.CompletionStage;

/**
 * Where {@code /select} leaves a selection for a later {@code /reservations} replay: the
 * asynchronous seam behind which the pending-selection cache may live in this process
 * ({@link LocalPendingStore}) or in a cluster-wide map, so that a replay may reach another node.
 * Stages of the local store are complete on return; a distributed store completes them on its own
 * threads and never blocks the caller.
 *
 * <p>A replay is two steps so that a booking that fails keeps the entry: {@link #peek} the entry,
 * book, then {@link #removeIfGeneration} exactly that entry (a newer {@link #put} under the same
 * key survives).
 *
 * @param <K> key, e.g. (partition, selection_id)
 * @param <V> cached booking inputs
 */
public interface PendingStore<K, V> {

  /** Stores {@code value} under {@code key}, replacing any entry; completes with its generation. */
  CompletionStage<Long> put(K key, V value, long bytes);

  /** The live entry under {@code key} with its generation, or null. */
  CompletionStage<PendingEntry<V>> peek(K key);

  /** Removes the entry under {@code key} only if it has {@code generation}; true if it did. */
  CompletionStage<Boolean> removeIfGeneration(K key, long generation);

  /** Removes the entry under {@code key}, whatever its generation. */
  CompletionStage<Void> remove(K key);

  /** Entries this process holds (a local view, for metrics and tests). */
  int size();
}
