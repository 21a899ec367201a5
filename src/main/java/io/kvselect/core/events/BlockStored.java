package io.kvselect.core.events;

/**
 * Blocks that became full and were cached: {@code blockHashes[i]} covers
 * {@code tokenIds[i*blockSize .. (i+1)*blockSize]}; {@code parentHash} (when {@code hasParent})
 * is the engine hash of the block just before the first listed one. Nullable fields are absent
 * on the wire. {@code mmHashes[i]}, when present, are block i's multimodal object hashes.
 */
public record BlockStored(
    long[] blockHashes,
    boolean hasParent,
    long parentHash,
    int[] tokenIds,
    int blockSize,
    String medium,
    String loraName,
    String cacheSalt,
    long[][] mmHashes,
    Integer groupIdx,
    String kvCacheSpecKind,
    String locality) implements KvEvent {}
