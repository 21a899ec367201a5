package io.kvselect.core.config;

/**
 * A mutable copy of a {@link RouterConfig} that the loader edits knob by knob. Confined to the
 * loading thread; never shared.
 */
final class RouterConfigDraft {
  double overlapScoreCredit;
  double overlapScoreCreditDecay;
  double prefillLoadScale;
  double decodeActiveRequestWeight;
  double hostCacheHitWeight;
  double diskCacheHitWeight;
  double routerTemperature;
  boolean useKvEvents;
  boolean trackActiveBlocks;
  boolean trackOutputBlocks;
  boolean assumeKvReuse;
  boolean trackPrefillTokens;
  double routerTtlSecs;
  String approximateCachePolicy;
  Double predictedTtlSecs;
  Double queueThreshold;
  String queuePolicy;
  double sharedCacheMultiplier;
  Double decodeBusyThreshold;
  Double prefillBusyThreshold;
  double activeRequestExpirySecs;
  String trackingHash;
  boolean replicaSync;
  String prefillLoadModel;
  String policyConfig;
  int eventThreads;
  boolean useRemoteIndexer;
  String sharedCacheType;
  int minInitialWorkers;
  String trackingKeyFile;
  String trackingKeyId;
  PolicySettings selectionPolicy;

  RouterConfigDraft(RouterConfig c) {
    overlapScoreCredit = c.overlapScoreCredit();
    overlapScoreCreditDecay = c.overlapScoreCreditDecay();
    prefillLoadScale = c.prefillLoadScale();
    decodeActiveRequestWeight = c.decodeActiveRequestWeight();
    hostCacheHitWeight = c.hostCacheHitWeight();
    diskCacheHitWeight = c.diskCacheHitWeight();
    routerTemperature = c.routerTemperature();
    useKvEvents = c.useKvEvents();
    trackActiveBlocks = c.trackActiveBlocks();
    trackOutputBlocks = c.trackOutputBlocks();
    assumeKvReuse = c.assumeKvReuse();
    trackPrefillTokens = c.trackPrefillTokens();
    routerTtlSecs = c.routerTtlSecs();
    approximateCachePolicy = c.approximateCachePolicy();
    predictedTtlSecs = c.predictedTtlSecs();
    queueThreshold = c.queueThreshold();
    queuePolicy = c.queuePolicy();
    sharedCacheMultiplier = c.sharedCacheMultiplier();
    decodeBusyThreshold = c.decodeBusyThreshold();
    prefillBusyThreshold = c.prefillBusyThreshold();
    activeRequestExpirySecs = c.activeRequestExpirySecs();
    trackingHash = c.trackingHash();
    replicaSync = c.replicaSync();
    prefillLoadModel = c.prefillLoadModel();
    policyConfig = c.policyConfig();
    eventThreads = c.eventThreads();
    useRemoteIndexer = c.useRemoteIndexer();
    sharedCacheType = c.sharedCacheType();
    minInitialWorkers = c.minInitialWorkers();
    trackingKeyFile = c.trackingKeyFile();
    trackingKeyId = c.trackingKeyId();
    selectionPolicy = c.selectionPolicy();
  }

  RouterConfig build() {
    return new RouterConfig(
        overlapScoreCredit, overlapScoreCreditDecay, prefillLoadScale, decodeActiveRequestWeight,
        hostCacheHitWeight, diskCacheHitWeight, routerTemperature, useKvEvents, trackActiveBlocks,
        trackOutputBlocks, assumeKvReuse, trackPrefillTokens, routerTtlSecs,
        approximateCachePolicy, predictedTtlSecs, queueThreshold, queuePolicy,
        sharedCacheMultiplier, decodeBusyThreshold, prefillBusyThreshold,
        activeRequestExpirySecs, trackingHash, replicaSync, prefillLoadModel, policyConfig,
        eventThreads, useRemoteIndexer, sharedCacheType, minInitialWorkers, trackingKeyFile,
        trackingKeyId, selectionPolicy);
  }
}
