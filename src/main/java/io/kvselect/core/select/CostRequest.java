package io.kvselect.core.select;

/**
 * The per-request inputs of {@link CostFunction} that are the same for every candidate rank.
 *
 * <p>Invariants: {@code blockSize >= 1}, {@code islTokens >= 0}. {@code trackPrefill} is the
 * resolved {@code router_track_prefill_tokens} (service value or request override);
 * {@code decodeWorkerPool} is true when the partition's workers are a disaggregated decode pool
 * (Dynamo's {@code worker_type == "decode"}), which enables the decode-pool cost form.
 *
 * @param blockSize KV block size of the partition, in tokens
 * @param islTokens input sequence length of the request, in tokens
 * @param trackPrefill whether active prefill tokens are charged
 * @param decodeWorkerPool whether candidates are decode-pool workers
 */
public record CostRequest(
    int blockSize, long islTokens, boolean trackPrefill, boolean decodeWorkerPool) {

  public CostRequest {
    if (blockSize < 1) {
      throw new IllegalArgumentException("blockSize must be >= 1, got " + blockSize);
    }
    if (islTokens < 0) {
      throw new IllegalArgumentException("islTokens must be >= 0, got " + islTokens);
    }
  }

  /**
   * {@code ceil(isl / blockSize)}, at least 1 so that the credit decay, which divides by it, stays
   * finite for an empty prompt.
   */
  public long requestBlocks() {
    return Math.max(1L, (islTokens + blockSize - 1) / blockSize);
  }
}
