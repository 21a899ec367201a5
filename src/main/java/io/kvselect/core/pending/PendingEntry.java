package io.kvselect.core.pending;

/**
 * A live entry of a {@link PendingSelectionCache}: the value and the generation its
 * {@link PendingSelectionCache#put} returned, for a later
 * {@link PendingSelectionCache#removeIfGeneration}.
 */
public record PendingEntry<V>(V value, long generation) {}
