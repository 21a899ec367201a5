package io.kvselect.core.events;

/**
 * Blocks that became full and were cached: {@code blockHashes[i]} covers
 * {@code tokenIds[i*blockSize .. (i+1)*blockSize]}; {@code parentHash} (when {@code hasParent})
 * is the engine hash of the block just before the first listed one. Nullable fields are absent
 * on the wire. {@code mmHashes[i]}, when present, are block i's multimodal object hashes.
 *
 * <p>{@code eagle} is true when the engine sent {@code token_ids} as bigrams ({@code [[a,b],...]},
 * SGLang with EAGLE speculative decoding). The bigrams are flattened as Dynamo does: the first
 * token of every pair, then the second token of the last pair, so {@code tokenIds} has one token
 * more than the number of pairs and block {@code i} is hashed over the overlapping window
 * {@code tokenIds[i*blockSize .. (i+1)*blockSize + 1)}.
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
    String locality,
    boolean eagle)
    implements KvEvent {

  /** A store whose {@code token_ids} came as a flat list (not eagle bigrams). */
  public BlockStored(
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
      String locality) {
    this(
        blockHashes,
        hasParent,
        parentHash,
        tokenIds,
        blockSize,
        medium,
        loraName,
        cacheSalt,
        mmHashes,
        groupIdx,
        kvCacheSpecKind,
        locality,
        false);
  }
}
