package io.kvselect.core.service;

/**
 * The prompt of a request, as supplied: either {@code tokenIds} (hashed by the service with the
 * partition's block size) or the precomputed triple {@code blockHashes}, {@code sequenceHashes},
 * {@code islTokens}, which is trusted as given. Reservations may carry only
 * {@code sequenceHashes} + {@code islTokens}. {@code blockMmHashes[i]}, when present, holds the
 * multimodal object hashes of block {@code i} (appended to that block's hash input).
 * Arrays are owned by the record after construction (never copied on the hot path).
 */
public record PromptInput(
    int[] tokenIds,
    long[] blockHashes,
    long[] sequenceHashes,
    Long islTokens,
    String loraName,
    String cacheSalt,
    Boolean isEagle,
    long[][] blockMmHashes) {

  public static PromptInput tokens(int... tokens) {
    return new PromptInput(tokens, null, null, null, null, null, null, null);
  }

  public static PromptInput hashes(long[] blockHashes, long[] sequenceHashes, long isl) {
    return new PromptInput(null, blockHashes, sequenceHashes, isl, null, null, null, null);
  }

  public boolean hasTokens() {
    return tokenIds != null;
  }

  /** True when nothing identifies a prompt at all. */
  public boolean isEmpty() {
    return tokenIds == null && blockHashes == null && sequenceHashes == null && islTokens == null;
  }
}
