package io.kvselect.core.events;

/** The engine dropped its whole prefix cache (all ranks of the worker). */
public record AllBlocksCleared() implements KvEvent {}
