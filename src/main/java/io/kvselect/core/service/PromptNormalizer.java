package io.kvselect.core.service;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.hash.BlockHasher;
import java.util.random.RandomGenerator;

/**
 * Turns a {@link PromptInput} into hashes for one partition's block size. Tokens are hashed here
 * (Dynamo §2.2); a precomputed triple is validated and trusted. Stateless apart from the RNG used
 * for untracked-reuse hashes; safe to call from any thread, outside every lock.
 */
final class PromptNormalizer {

  private PromptNormalizer() {}

  /**
   * Normalizes {@code p} for {@code blockSize}; {@code requireBlocks} is false only for
   * reservations, which may carry just {@code sequence_hashes} and {@code isl_tokens}.
   */
  static NormalizedPrompt normalize(
      PromptInput p,
      int blockSize,
      boolean partitionEagle,
      boolean assumeKvReuse,
      boolean requireBlocks,
      RandomGenerator rng) {
    if (p == null || p.isEmpty()) {
      throw SelectionException.badRequest(
          "either token_ids or block_hashes, sequence_hashes and isl_tokens are required");
    }
    long[] blocks;
    long[] seq;
    long isl;
    if (p.hasTokens()) {
      boolean eagle = p.isEagle() != null ? p.isEagle() : partitionEagle;
      long seed = BlockHasher.saltSeed(p.loraName(), p.cacheSalt());
      int[] tokens = p.tokenIds();
      blocks =
          BlockHasher.localBlockHashes(
              tokens, tokens.length, blockSize, seed, eagle, p.blockMmHashes());
      seq = BlockHasher.sequenceHashes(blocks);
      isl = tokens.length;
    } else {
      if (p.sequenceHashes() == null) {
        throw SelectionException.badRequest("sequence_hashes is required when token_ids is absent");
      }
      if (p.islTokens() == null) {
        throw SelectionException.badRequest("isl_tokens is required when token_ids is absent");
      }
      if (requireBlocks && p.blockHashes() == null) {
        throw SelectionException.badRequest("block_hashes is required when token_ids is absent");
      }
      if (p.islTokens() <= 0) {
        throw SelectionException.badRequest("isl_tokens must be greater than 0");
      }
      if (p.blockHashes() != null && p.blockHashes().length != p.sequenceHashes().length) {
        throw SelectionException.badRequest(
            "block_hashes and sequence_hashes must have the same length ("
                + p.blockHashes().length
                + " != "
                + p.sequenceHashes().length
                + ")");
      }
      blocks = p.blockHashes();
      seq = p.sequenceHashes();
      isl = p.islTokens();
    }
    if (isl <= 0) {
      throw SelectionException.badRequest("the prompt is empty: token_ids must not be empty");
    }
    long[] tracking = seq;
    if (!assumeKvReuse) {
      tracking = new long[seq.length];
      for (int i = 0; i < tracking.length; i++) {
        tracking[i] = rng.nextLong();
      }
    }
    return new NormalizedPrompt(blocks, seq, tracking, isl, p.loraName());
  }
}
