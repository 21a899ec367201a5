package io.kvselect.core.events;

/**
 * Cached blocks that were evicted from {@code medium} (null = device). {@code groupIdx} and
 * {@code kvCacheSpecKind} identify the KV-cache group of hybrid models (null when not sent).
 */
public record BlockRemoved(
    long[] blockHashes, String medium, Integer groupIdx, String locality, String kvCacheSpecKind)
    implements KvEvent {

  /** A removal without a {@code kv_cache_spec_kind}. */
  public BlockRemoved(long[] blockHashes, String medium, Integer groupIdx, String locality) {
    this(blockHashes, medium, groupIdx, locality, null);
  }
}
