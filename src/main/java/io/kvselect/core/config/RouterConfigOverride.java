package io.kvselect.core.config;

/**
 * A request's {@code router_config_override}: each non-null field replaces the service value for
 * that one request. {@code overlapScoreWeight} is Dynamo's deprecated alias (sets
 * prefill_load_scale, and a zero also zeroes the credit). {@code policy} is one of
 * {@link PolicySettings#NAMES} (the parser validates it).
 */
public record RouterConfigOverride(
    Double overlapScoreCredit,
    Double prefillLoadScale,
    Double routerTemperature,
    Boolean assumeKvReuse,
    Boolean trackPrefillTokens,
    Double sharedCacheMultiplier,
    Double overlapScoreWeight,
    String policy) {

  public static final RouterConfigOverride NONE =
      new RouterConfigOverride(null, null, null, null, null, null, null, null);

  public boolean isEmpty() {
    return overlapScoreCredit == null
        && prefillLoadScale == null
        && routerTemperature == null
        && assumeKvReuse == null
        && trackPrefillTokens == null
        && sharedCacheMultiplier == null
        && overlapScoreWeight == null
        && policy == null;
  }
}
