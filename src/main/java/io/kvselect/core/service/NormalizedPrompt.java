package io.kvselect.core.service;

/**
 * A prompt after normalization: {@code blockHashes} are local block hashes for index lookups
 * (null for a hash-only reservation), {@code sequenceHashes} the public chain returned to callers,
 * {@code trackingHashes} the hashes booked in the load accounting (the public chain, or random
 * per block when KV reuse is not assumed), {@code isl} the input length in tokens.
 */
record NormalizedPrompt(
    long[] blockHashes, long[] sequenceHashes, long[] trackingHashes, long isl, String loraName) {

  int numBlocks() {
    return blockHashes == null ? 0 : blockHashes.length;
  }
}
