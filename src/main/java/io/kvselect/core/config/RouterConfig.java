package io.kvselect.core.config;

/**
 * The scheduling knobs (Dynamo's {@code KvRouterConfig}), with Dynamo's defaults. Immutable; a
 * per-request {@link RouterConfigOverride} yields a derived copy through {@link #with}.
 *
 * <p>Nullable {@code Double}s are "unset" knobs (thresholds, predicted TTL, queue threshold).
 */
public record RouterConfig(
    double overlapScoreCredit,
    double overlapScoreCreditDecay,
    double prefillLoadScale,
    double decodeActiveRequestWeight,
    double hostCacheHitWeight,
    double diskCacheHitWeight,
    double routerTemperature,
    boolean useKvEvents,
    boolean trackActiveBlocks,
    boolean trackOutputBlocks,
    boolean assumeKvReuse,
    boolean trackPrefillTokens,
    double routerTtlSecs,
    String approximateCachePolicy,
    Double predictedTtlSecs,
    Double queueThreshold,
    String queuePolicy,
    double sharedCacheMultiplier,
    Double decodeBusyThreshold,
    Double prefillBusyThreshold,
    double activeRequestExpirySecs,
    String trackingHash) {

  /** Dynamo's defaults. */
  public static RouterConfig defaults() {
    return new RouterConfig(
        1.0, 0.0, 1.0, 0.0, 0.75, 0.25, 0.0, true, true, false, true, true, 120.0, "ttl", null,
        null, "fcfs", 0.0, null, null, 300.0, "public-xxh3-v1");
  }

  /** True when some knob makes requests wait in a router queue (later work). */
  public boolean queueingEnabled() {
    return queueThreshold != null;
  }

  /** Applies a per-request override; absent override fields keep this config's values. */
  public RouterConfig with(RouterConfigOverride o) {
    if (o == null || o.isEmpty()) {
      return this;
    }
    double credit = overlapScoreCredit;
    double scale = prefillLoadScale;
    if (o.overlapScoreWeight() != null) {
      scale = o.overlapScoreWeight();
      if (o.overlapScoreWeight() == 0.0) {
        credit = 0.0;
      }
    }
    if (o.overlapScoreCredit() != null) {
      credit = o.overlapScoreCredit();
    }
    if (o.prefillLoadScale() != null) {
      scale = o.prefillLoadScale();
    }
    return new RouterConfig(
        credit,
        overlapScoreCreditDecay,
        scale,
        decodeActiveRequestWeight,
        hostCacheHitWeight,
        diskCacheHitWeight,
        o.routerTemperature() != null ? o.routerTemperature() : routerTemperature,
        useKvEvents,
        trackActiveBlocks,
        trackOutputBlocks,
        o.assumeKvReuse() != null ? o.assumeKvReuse() : assumeKvReuse,
        o.trackPrefillTokens() != null ? o.trackPrefillTokens() : trackPrefillTokens,
        routerTtlSecs,
        approximateCachePolicy,
        predictedTtlSecs,
        queueThreshold,
        queuePolicy,
        o.sharedCacheMultiplier() != null ? o.sharedCacheMultiplier() : sharedCacheMultiplier,
        decodeBusyThreshold,
        prefillBusyThreshold,
        activeRequestExpirySecs,
        trackingHash);
  }
}
