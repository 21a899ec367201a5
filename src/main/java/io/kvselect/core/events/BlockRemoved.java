package io.kvselect.core.events;

/** Cached blocks that were evicted from {@code medium} (null = device). */
public record BlockRemoved(long[] blockHashes, String medium, Integer groupIdx, String locality) implements KvEvent {}
