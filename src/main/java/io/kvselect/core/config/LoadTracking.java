package io.kvselect.core.config;

/**
 * What the router counts as a worker's load, and when that load makes a worker busy (Dynamo's
 * conditional disaggregation thresholds). Immutable; values are checked by {@link
 * RouterConfigLoader}.
 *
 * @param trackActiveBlocks {@code router_track_active_blocks}: count the blocks of active requests
 * @param trackOutputBlocks {@code router_track_output_blocks}: count blocks of generated output
 * @param assumeKvReuse {@code router_assume_kv_reuse}: a booked prompt reuses cached blocks
 * @param trackPrefillTokens {@code router_track_prefill_tokens}: count prefill tokens in flight
 * @param activeRequestExpirySecs {@code active_request_expiry_secs}: when an unfreed booking ends
 * @param prefillLoadModel {@code router_prefill_load_model}: {@code none} or {@code aic}
 * @param decodeBusyThreshold {@code conditional_disagg_decode_busy_threshold} (null: unset)
 * @param prefillBusyThreshold {@code conditional_disagg_prefill_busy_threshold} (null: unset)
 */
public record LoadTracking(
    boolean trackActiveBlocks,
    boolean trackOutputBlocks,
    boolean assumeKvReuse,
    boolean trackPrefillTokens,
    double activeRequestExpirySecs,
    String prefillLoadModel,
    Double decodeBusyThreshold,
    Double prefillBusyThreshold) {

  /** Dynamo's defaults. */
  public static final LoadTracking DEFAULTS =
      new LoadTracking(true, false, true, true, 300.0, "none", null, null);
}
