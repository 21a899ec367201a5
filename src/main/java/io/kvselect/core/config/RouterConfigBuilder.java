// Over 400 lines: one chainable setter per router knob (about 40), each with its config-file name;
// no logic beyond the setters.
package io.kvselect.core.config;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.kvselect.core.kvc.AdmitAccounting;
import io.kvselect.core.kvc.KvcParams;
import io.kvselect.core.kvc.ResetScope;

/**
 * Builds a {@link RouterConfig} knob by knob, Vert.x {@code *Options} style: one chainable setter
 * per knob, named after it, plus one per concern. Each knob setter carries the knob's config-file
 * name ({@code router} and {@code tracking} sections), so that {@link RouterConfigLoader} binds a
 * checked section onto a builder with Jackson; the deprecated {@code overlap_score_weight} is a
 * setter with Dynamo's meaning. Values are not checked here. Not thread-safe; confined to the
 * thread that fills it.
 */
public final class RouterConfigBuilder {
  private double overlapScoreCredit;
  private double overlapScoreCreditDecay;
  private double prefillLoadScale;
  private double decodeActiveRequestWeight;
  private double hostCacheHitWeight;
  private double diskCacheHitWeight;
  private double routerTemperature;
  private double sharedCacheMultiplier;
  private String sharedCacheType;
  private boolean useKvEvents;
  private double routerTtlSecs;
  private String approximateCachePolicy;
  private Double predictedTtlSecs;
  private int eventThreads;
  private boolean useRemoteIndexer;
  private boolean trackActiveBlocks;
  private boolean trackOutputBlocks;
  private boolean assumeKvReuse;
  private boolean trackPrefillTokens;
  private double activeRequestExpirySecs;
  private String prefillLoadModel;
  private Double decodeBusyThreshold;
  private Double prefillBusyThreshold;
  private Double queueThreshold;
  private String queuePolicy;
  private String policyConfig;
  private boolean replicaSync;
  private int minInitialWorkers;
  private String trackingHash;
  private String trackingKeyFile;
  private String trackingKeyId;
  private PolicySettings selectionPolicy;

  RouterConfigBuilder(RouterConfig c) {
    cost(c.cost());
    index(c.index());
    load(c.load());
    queue(c.queue());
    replica(c.replica());
    tracking(c.tracking());
    selectionPolicy = c.selectionPolicy();
  }

  /** Every knob of the cost concern. */
  public RouterConfigBuilder cost(CostWeights v) {
    overlapScoreCredit = v.overlapScoreCredit();
    overlapScoreCreditDecay = v.overlapScoreCreditDecay();
    prefillLoadScale = v.prefillLoadScale();
    decodeActiveRequestWeight = v.decodeActiveRequestWeight();
    hostCacheHitWeight = v.hostCacheHitWeight();
    diskCacheHitWeight = v.diskCacheHitWeight();
    routerTemperature = v.temperature();
    sharedCacheMultiplier = v.sharedCacheMultiplier();
    sharedCacheType = v.sharedCacheType();
    return this;
  }

  /** Every knob of the index concern. */
  public RouterConfigBuilder index(IndexSettings v) {
    useKvEvents = v.useKvEvents();
    routerTtlSecs = v.ttlSecs();
    approximateCachePolicy = v.approximateCachePolicy();
    predictedTtlSecs = v.predictedTtlSecs();
    eventThreads = v.eventThreads();
    useRemoteIndexer = v.useRemoteIndexer();
    return this;
  }

  /** Every knob of the load concern. */
  public RouterConfigBuilder load(LoadTracking v) {
    trackActiveBlocks = v.trackActiveBlocks();
    trackOutputBlocks = v.trackOutputBlocks();
    assumeKvReuse = v.assumeKvReuse();
    trackPrefillTokens = v.trackPrefillTokens();
    activeRequestExpirySecs = v.activeRequestExpirySecs();
    prefillLoadModel = v.prefillLoadModel();
    decodeBusyThreshold = v.decodeBusyThreshold();
    prefillBusyThreshold = v.prefillBusyThreshold();
    return this;
  }

  /** Every knob of the queue concern. */
  public RouterConfigBuilder queue(QueueSettings v) {
    queueThreshold = v.threshold();
    queuePolicy = v.policy();
    policyConfig = v.policyConfig();
    return this;
  }

  /** Every knob of the replica concern. */
  public RouterConfigBuilder replica(ReplicaSettings v) {
    replicaSync = v.sync();
    minInitialWorkers = v.minInitialWorkers();
    return this;
  }

  /** Every knob of the tracking concern. */
  public RouterConfigBuilder tracking(TrackingSettings v) {
    trackingHash = v.hash();
    trackingKeyFile = v.keyFile();
    trackingKeyId = v.keyId();
    return this;
  }

  public RouterConfigBuilder selectionPolicy(PolicySettings v) {
    selectionPolicy = v;
    return this;
  }

  @JsonProperty("overlap_score_credit")
  public RouterConfigBuilder overlapScoreCredit(double v) {
    overlapScoreCredit = v;
    return this;
  }

  @JsonProperty("overlap_score_credit_decay")
  public RouterConfigBuilder overlapScoreCreditDecay(double v) {
    overlapScoreCreditDecay = v;
    return this;
  }

  @JsonProperty("prefill_load_scale")
  public RouterConfigBuilder prefillLoadScale(double v) {
    prefillLoadScale = v;
    return this;
  }

  @JsonProperty("decode_active_request_weight")
  public RouterConfigBuilder decodeActiveRequestWeight(double v) {
    decodeActiveRequestWeight = v;
    return this;
  }

  @JsonProperty("host_cache_hit_weight")
  public RouterConfigBuilder hostCacheHitWeight(double v) {
    hostCacheHitWeight = v;
    return this;
  }

  @JsonProperty("disk_cache_hit_weight")
  public RouterConfigBuilder diskCacheHitWeight(double v) {
    diskCacheHitWeight = v;
    return this;
  }

  @JsonProperty("router_temperature")
  public RouterConfigBuilder routerTemperature(double v) {
    routerTemperature = v;
    return this;
  }

  @JsonProperty("shared_cache_multiplier")
  public RouterConfigBuilder sharedCacheMultiplier(double v) {
    sharedCacheMultiplier = v;
    return this;
  }

  @JsonProperty("shared_cache_type")
  public RouterConfigBuilder sharedCacheType(String v) {
    sharedCacheType = v;
    return this;
  }

  @JsonProperty("use_kv_events")
  public RouterConfigBuilder useKvEvents(boolean v) {
    useKvEvents = v;
    return this;
  }

  @JsonProperty("router_ttl_secs")
  public RouterConfigBuilder routerTtlSecs(double v) {
    routerTtlSecs = v;
    return this;
  }

  @JsonProperty("router_approximate_cache_policy")
  public RouterConfigBuilder approximateCachePolicy(String v) {
    approximateCachePolicy = v;
    return this;
  }

  @JsonProperty("router_predicted_ttl_secs")
  public RouterConfigBuilder predictedTtlSecs(Double v) {
    predictedTtlSecs = v;
    return this;
  }

  @JsonProperty("router_event_threads")
  public RouterConfigBuilder eventThreads(int v) {
    eventThreads = v;
    return this;
  }

  @JsonProperty("use_remote_indexer")
  public RouterConfigBuilder useRemoteIndexer(boolean v) {
    useRemoteIndexer = v;
    return this;
  }

  @JsonProperty("router_track_active_blocks")
  public RouterConfigBuilder trackActiveBlocks(boolean v) {
    trackActiveBlocks = v;
    return this;
  }

  @JsonProperty("router_track_output_blocks")
  public RouterConfigBuilder trackOutputBlocks(boolean v) {
    trackOutputBlocks = v;
    return this;
  }

  @JsonProperty("router_assume_kv_reuse")
  public RouterConfigBuilder assumeKvReuse(boolean v) {
    assumeKvReuse = v;
    return this;
  }

  @JsonProperty("router_track_prefill_tokens")
  public RouterConfigBuilder trackPrefillTokens(boolean v) {
    trackPrefillTokens = v;
    return this;
  }

  @JsonProperty("active_request_expiry_secs")
  public RouterConfigBuilder activeRequestExpirySecs(double v) {
    activeRequestExpirySecs = v;
    return this;
  }

  @JsonProperty("router_prefill_load_model")
  public RouterConfigBuilder prefillLoadModel(String v) {
    prefillLoadModel = v;
    return this;
  }

  @JsonProperty("conditional_disagg_decode_busy_threshold")
  public RouterConfigBuilder decodeBusyThreshold(Double v) {
    decodeBusyThreshold = v;
    return this;
  }

  @JsonProperty("conditional_disagg_prefill_busy_threshold")
  public RouterConfigBuilder prefillBusyThreshold(Double v) {
    prefillBusyThreshold = v;
    return this;
  }

  @JsonProperty("router_queue_threshold")
  public RouterConfigBuilder queueThreshold(Double v) {
    queueThreshold = v;
    return this;
  }

  @JsonProperty("router_queue_policy")
  public RouterConfigBuilder queuePolicy(String v) {
    queuePolicy = v;
    return this;
  }

  @JsonProperty("router_policy_config")
  public RouterConfigBuilder policyConfig(String v) {
    policyConfig = v;
    return this;
  }

  @JsonProperty("router_replica_sync")
  public RouterConfigBuilder replicaSync(boolean v) {
    replicaSync = v;
    return this;
  }

  @JsonProperty("min_initial_workers")
  public RouterConfigBuilder minInitialWorkers(int v) {
    minInitialWorkers = v;
    return this;
  }

  @JsonProperty("hash")
  public RouterConfigBuilder trackingHash(String v) {
    trackingHash = v;
    return this;
  }

  @JsonProperty("key_file")
  public RouterConfigBuilder trackingKeyFile(String v) {
    trackingKeyFile = v;
    return this;
  }

  @JsonProperty("key_id")
  public RouterConfigBuilder trackingKeyId(String v) {
    trackingKeyId = v;
    return this;
  }

  /** Dynamo's deprecated alias: sets {@code prefill_load_scale}, and a zero also zeroes the credit. */
  @JsonProperty("overlap_score_weight")
  public RouterConfigBuilder overlapScoreWeight(double v) {
    prefillLoadScale = v;
    if (v == 0.0) {
      overlapScoreCredit = 0.0;
    }
    return this;
  }

  @JsonProperty("policy")
  public RouterConfigBuilder policy(String name) {
    selectionPolicy = selectionPolicy.withName(name);
    return this;
  }

  @JsonProperty("kvc_alpha")
  public RouterConfigBuilder kvcAlpha(double v) {
    return kvc(selectionPolicy.kvc().withAlpha(v));
  }

  @JsonProperty("kvc_tau_reject")
  public RouterConfigBuilder kvcTauReject(int v) {
    return kvc(selectionPolicy.kvc().withTauReject(v));
  }

  @JsonProperty("kvc_tau_append")
  public RouterConfigBuilder kvcTauAppend(int v) {
    return kvc(selectionPolicy.kvc().withTauAppend(v));
  }

  @JsonProperty("kvc_rho")
  public RouterConfigBuilder kvcRho(double v) {
    return kvc(selectionPolicy.kvc().withRho(v));
  }

  /** Null means |D| - 1. */
  @JsonProperty("kvc_epsilon")
  public RouterConfigBuilder kvcEpsilon(Integer v) {
    return kvc(selectionPolicy.kvc().withEpsilon(v));
  }

  @JsonProperty("kvc_admit_accounting")
  public RouterConfigBuilder kvcAdmitAccounting(String v) {
    return kvc(selectionPolicy.kvc().withAccounting(AdmitAccounting.parse(v)));
  }

  @JsonProperty("kvc_reset_scope")
  public RouterConfigBuilder kvcResetScope(String v) {
    return kvc(selectionPolicy.kvc().withResetScope(ResetScope.parse(v)));
  }

  @JsonProperty("kvc_admit_waiting")
  public RouterConfigBuilder kvcAdmitWaiting(boolean v) {
    return kvc(selectionPolicy.kvc().withCountWaiting(v));
  }

  private RouterConfigBuilder kvc(KvcParams k) {
    selectionPolicy = selectionPolicy.withKvc(k);
    return this;
  }

  public RouterConfig build() {
    return new RouterConfig(
        new CostWeights(
            overlapScoreCredit,
            overlapScoreCreditDecay,
            prefillLoadScale,
            decodeActiveRequestWeight,
            hostCacheHitWeight,
            diskCacheHitWeight,
            routerTemperature,
            sharedCacheMultiplier,
            sharedCacheType),
        new IndexSettings(
            useKvEvents,
            routerTtlSecs,
            approximateCachePolicy,
            predictedTtlSecs,
            eventThreads,
            useRemoteIndexer),
        new LoadTracking(
            trackActiveBlocks,
            trackOutputBlocks,
            assumeKvReuse,
            trackPrefillTokens,
            activeRequestExpirySecs,
            prefillLoadModel,
            decodeBusyThreshold,
            prefillBusyThreshold),
        new QueueSettings(queueThreshold, queuePolicy, policyConfig),
        new ReplicaSettings(replicaSync, minInitialWorkers),
        new TrackingSettings(trackingHash, trackingKeyFile, trackingKeyId),
        selectionPolicy);
  }
}
