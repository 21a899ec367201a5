package io.kvselect.core.config;

/**
 * The weights of the selection cost (Dynamo's cost function): how much a cached prefix is worth
 * against a worker's load, and the softmax temperature. Immutable; values are checked by {@link
 * RouterConfigLoader} where they are read, not here.
 *
 * @param overlapScoreCredit {@code overlap_score_credit}: credit per cached block, in [0, 1]
 * @param overlapScoreCreditDecay {@code overlap_score_credit_decay}: how fast the credit decays
 *     with the depth of the match
 * @param prefillLoadScale {@code prefill_load_scale}: weight of the prefill load
 * @param decodeActiveRequestWeight {@code decode_active_request_weight}: cost per active request
 * @param hostCacheHitWeight {@code host_cache_hit_weight}: credit of a block found in host memory
 * @param diskCacheHitWeight {@code disk_cache_hit_weight}: credit of a block found on disk
 * @param temperature {@code router_temperature}: softmax temperature, 0 picks the minimum
 * @param sharedCacheMultiplier {@code shared_cache_multiplier}: credit of a shared-cache hit
 * @param sharedCacheType {@code shared_cache_type}: the shared cache credited (null: none)
 */
public record CostWeights(
    double overlapScoreCredit,
    double overlapScoreCreditDecay,
    double prefillLoadScale,
    double decodeActiveRequestWeight,
    double hostCacheHitWeight,
    double diskCacheHitWeight,
    double temperature,
    double sharedCacheMultiplier,
    String sharedCacheType) {

  /** Dynamo's defaults. */
  public static final CostWeights DEFAULTS =
      new CostWeights(1.0, 0.0, 1.0, 0.0, 0.75, 0.25, 0.0, 0.0, null);
}
