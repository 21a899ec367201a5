package io.kvselect.core.config;

/**
 * The scheduling knobs (Dynamo's {@code KvRouterConfig}), with Dynamo's defaults. Immutable; a
 * per-request {@link RouterConfigOverride} yields a derived copy through {@link #with}.
 *
 * <p>Nullable {@code Double}s are "unset" knobs (thresholds, predicted TTL, queue threshold);
 * nullable {@code String}s are unset paths or identifiers. Values are not validated here:
 * {@link RouterConfigLoader} validates what it reads from the environment or a config file.
 *
 * <p>The components after {@code trackingHash} were added for the full {@code DYN_ROUTER_*}
 * table; the original 22-argument constructor remains and fills them with their defaults.
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
    String trackingHash,
    boolean replicaSync,
    String prefillLoadModel,
    String policyConfig,
    int eventThreads,
    boolean useRemoteIndexer,
    String sharedCacheType,
    int minInitialWorkers,
    String trackingKeyFile,
    String trackingKeyId,
    PolicySettings selectionPolicy) {

  public RouterConfig {
    selectionPolicy = selectionPolicy == null ? PolicySettings.defaults() : selectionPolicy;
  }

  /** A copy with another selection policy. */
  public RouterConfig withSelectionPolicy(PolicySettings p) {
    return new RouterConfig(
        overlapScoreCredit, overlapScoreCreditDecay, prefillLoadScale, decodeActiveRequestWeight,
        hostCacheHitWeight, diskCacheHitWeight, routerTemperature, useKvEvents, trackActiveBlocks,
        trackOutputBlocks, assumeKvReuse, trackPrefillTokens, routerTtlSecs,
        approximateCachePolicy, predictedTtlSecs, queueThreshold, queuePolicy,
        sharedCacheMultiplier, decodeBusyThreshold, prefillBusyThreshold,
        activeRequestExpirySecs, trackingHash, replicaSync, prefillLoadModel, policyConfig,
        eventThreads, useRemoteIndexer, sharedCacheType, minInitialWorkers, trackingKeyFile,
        trackingKeyId, p);
  }

  /** The original knob set; the later components take their defaults. */
  public RouterConfig(
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
    this(
        overlapScoreCredit, overlapScoreCreditDecay, prefillLoadScale, decodeActiveRequestWeight,
        hostCacheHitWeight, diskCacheHitWeight, routerTemperature, useKvEvents, trackActiveBlocks,
        trackOutputBlocks, assumeKvReuse, trackPrefillTokens, routerTtlSecs,
        approximateCachePolicy, predictedTtlSecs, queueThreshold, queuePolicy,
        sharedCacheMultiplier, decodeBusyThreshold, prefillBusyThreshold,
        activeRequestExpirySecs, trackingHash, false, "none", null, 4, false, null, 0, null, null, null);
  }

  /** Dynamo's defaults. */
  public static RouterConfig defaults() {
    return new RouterConfig(
        1.0, 0.0, 1.0, 0.0, 0.75, 0.25, 0.0, true, true, false, true, true, 120.0, "ttl", null,
        null, "fcfs", 0.0, null, null, 300.0, "public-xxh3-v1");
  }

  /**
   * A copy with the tracking-hash settings replaced (the CLI's {@code --router-tracking-*}
   * flags). Null arguments keep the current value.
   */
  public RouterConfig withTracking(String hash, String keyFile, String keyId) {
    return new RouterConfig(
        overlapScoreCredit, overlapScoreCreditDecay, prefillLoadScale, decodeActiveRequestWeight,
        hostCacheHitWeight, diskCacheHitWeight, routerTemperature, useKvEvents, trackActiveBlocks,
        trackOutputBlocks, assumeKvReuse, trackPrefillTokens, routerTtlSecs,
        approximateCachePolicy, predictedTtlSecs, queueThreshold, queuePolicy,
        sharedCacheMultiplier, decodeBusyThreshold, prefillBusyThreshold,
        activeRequestExpirySecs, hash != null ? hash : trackingHash, replicaSync,
        prefillLoadModel, policyConfig, eventThreads, useRemoteIndexer, sharedCacheType,
        minInitialWorkers, keyFile != null ? keyFile : trackingKeyFile,
        keyId != null ? keyId : trackingKeyId, selectionPolicy);
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
        trackingHash,
        replicaSync,
        prefillLoadModel,
        policyConfig,
        eventThreads,
        useRemoteIndexer,
        sharedCacheType,
        minInitialWorkers,
        trackingKeyFile,
        trackingKeyId,
        o.policy() != null ? selectionPolicy.withName(o.policy()) : selectionPolicy);
  }
}
