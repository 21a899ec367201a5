package io.kvselect.core.config;

import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The table of router knobs: config-file name, environment variables (first present wins), value
 * kind, and how to read and write the knob. Declaration order is application order, so the
 * deprecated {@code overlap_score_weight} lands after {@code prefill_load_scale} and overrides it,
 * as in Dynamo. Immutable.
 */
enum RouterKnob {
  OVERLAP_SCORE_CREDIT(Section.ROUTER, "overlap_score_credit", KnobKind.CREDIT,
      List.of("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT"),
      RouterConfig::overlapScoreCredit, (d, v) -> d.overlapScoreCredit = (Double) v),
  OVERLAP_SCORE_CREDIT_DECAY(Section.ROUTER, "overlap_score_credit_decay", KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY"),
      RouterConfig::overlapScoreCreditDecay, (d, v) -> d.overlapScoreCreditDecay = (Double) v),
  PREFILL_LOAD_SCALE(Section.ROUTER, "prefill_load_scale", KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_PREFILL_LOAD_SCALE"),
      RouterConfig::prefillLoadScale, (d, v) -> d.prefillLoadScale = (Double) v),
  /** Deprecated: sets prefill_load_scale, and a zero also zeroes the credit. Never written. */
  OVERLAP_SCORE_WEIGHT(Section.ROUTER, "overlap_score_weight", KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT", "DYN_OVERLAP_SCORE_WEIGHT"),
      null, (d, v) -> {
        d.prefillLoadScale = (Double) v;
        if ((Double) v == 0.0) {
          d.overlapScoreCredit = 0.0;
        }
      }),
  DECODE_ACTIVE_REQUEST_WEIGHT(Section.ROUTER, "decode_active_request_weight",
      KnobKind.NON_NEGATIVE, List.of("DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT"),
      RouterConfig::decodeActiveRequestWeight, (d, v) -> d.decodeActiveRequestWeight = (Double) v),
  HOST_CACHE_HIT_WEIGHT(Section.ROUTER, "host_cache_hit_weight", KnobKind.UNIT,
      List.of("DYN_ROUTER_HOST_CACHE_HIT_WEIGHT"),
      RouterConfig::hostCacheHitWeight, (d, v) -> d.hostCacheHitWeight = (Double) v),
  DISK_CACHE_HIT_WEIGHT(Section.ROUTER, "disk_cache_hit_weight", KnobKind.UNIT,
      List.of("DYN_ROUTER_DISK_CACHE_HIT_WEIGHT"),
      RouterConfig::diskCacheHitWeight, (d, v) -> d.diskCacheHitWeight = (Double) v),
  ROUTER_TEMPERATURE(Section.ROUTER, "router_temperature", KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_TEMPERATURE"),
      RouterConfig::routerTemperature, (d, v) -> d.routerTemperature = (Double) v),
  USE_KV_EVENTS(Section.ROUTER, "use_kv_events", KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_USE_KV_EVENTS", "DYN_USE_KV_EVENTS"),
      RouterConfig::useKvEvents, (d, v) -> d.useKvEvents = (Boolean) v),
  REPLICA_SYNC(Section.ROUTER, "router_replica_sync", KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_REPLICA_SYNC"),
      RouterConfig::replicaSync, (d, v) -> d.replicaSync = (Boolean) v),
  TRACK_ACTIVE_BLOCKS(Section.ROUTER, "router_track_active_blocks", KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_TRACK_ACTIVE_BLOCKS"),
      RouterConfig::trackActiveBlocks, (d, v) -> d.trackActiveBlocks = (Boolean) v),
  TRACK_OUTPUT_BLOCKS(Section.ROUTER, "router_track_output_blocks", KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_TRACK_OUTPUT_BLOCKS"),
      RouterConfig::trackOutputBlocks, (d, v) -> d.trackOutputBlocks = (Boolean) v),
  ASSUME_KV_REUSE(Section.ROUTER, "router_assume_kv_reuse", KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_ASSUME_KV_REUSE"),
      RouterConfig::assumeKvReuse, (d, v) -> d.assumeKvReuse = (Boolean) v),
  TRACK_PREFILL_TOKENS(Section.ROUTER, "router_track_prefill_tokens", KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_TRACK_PREFILL_TOKENS"),
      RouterConfig::trackPrefillTokens, (d, v) -> d.trackPrefillTokens = (Boolean) v),
  PREFILL_LOAD_MODEL(Section.ROUTER, "router_prefill_load_model", KnobKind.CHOICE,
      List.of("DYN_ROUTER_PREFILL_LOAD_MODEL"), List.of("none", "aic"),
      RouterConfig::prefillLoadModel, (d, v) -> d.prefillLoadModel = (String) v),
  TTL_SECS(Section.ROUTER, "router_ttl_secs", KnobKind.POSITIVE,
      List.of("DYN_ROUTER_TTL_SECS"),
      RouterConfig::routerTtlSecs, (d, v) -> d.routerTtlSecs = (Double) v),
  APPROXIMATE_CACHE_POLICY(Section.ROUTER, "router_approximate_cache_policy", KnobKind.CHOICE,
      List.of("DYN_ROUTER_APPROXIMATE_CACHE_POLICY"), List.of("ttl", "lru"),
      RouterConfig::approximateCachePolicy, (d, v) -> d.approximateCachePolicy = (String) v),
  PREDICTED_TTL_SECS(Section.ROUTER, "router_predicted_ttl_secs", KnobKind.OPTIONAL_POSITIVE,
      List.of("DYN_ROUTER_PREDICTED_TTL_SECS"),
      RouterConfig::predictedTtlSecs, (d, v) -> d.predictedTtlSecs = (Double) v),
  QUEUE_THRESHOLD(Section.ROUTER, "router_queue_threshold", KnobKind.OPTIONAL_NON_NEGATIVE,
      List.of("DYN_ROUTER_QUEUE_THRESHOLD"),
      RouterConfig::queueThreshold, (d, v) -> d.queueThreshold = (Double) v),
  QUEUE_POLICY(Section.ROUTER, "router_queue_policy", KnobKind.CHOICE,
      List.of("DYN_ROUTER_QUEUE_POLICY"), List.of("fcfs", "lcfs", "wspt"),
      RouterConfig::queuePolicy, (d, v) -> d.queuePolicy = (String) v),
  POLICY_CONFIG(Section.ROUTER, "router_policy_config", KnobKind.OPTIONAL_STRING,
      List.of("DYN_ROUTER_POLICY_CONFIG"),
      RouterConfig::policyConfig, (d, v) -> d.policyConfig = (String) v),
  EVENT_THREADS(Section.ROUTER, "router_event_threads", KnobKind.POSITIVE_INT,
      List.of("DYN_ROUTER_EVENT_THREADS"),
      RouterConfig::eventThreads, (d, v) -> d.eventThreads = (Integer) v),
  USE_REMOTE_INDEXER(Section.ROUTER, "use_remote_indexer", KnobKind.BOOLEAN,
      List.of("DYN_USE_REMOTE_INDEXER"),
      RouterConfig::useRemoteIndexer, (d, v) -> d.useRemoteIndexer = (Boolean) v),
  SHARED_CACHE_MULTIPLIER(Section.ROUTER, "shared_cache_multiplier", KnobKind.UNIT,
      List.of("DYN_ROUTER_SHARED_CACHE_MULTIPLIER", "DYN_SHARED_CACHE_MULTIPLIER"),
      RouterConfig::sharedCacheMultiplier, (d, v) -> d.sharedCacheMultiplier = (Double) v),
  SHARED_CACHE_TYPE(Section.ROUTER, "shared_cache_type", KnobKind.OPTIONAL_CHOICE,
      List.of("DYN_ROUTER_SHARED_CACHE_TYPE", "DYN_SHARED_CACHE_TYPE"), List.of("hicache"),
      RouterConfig::sharedCacheType, (d, v) -> d.sharedCacheType = (String) v),
  DECODE_BUSY_THRESHOLD(Section.ROUTER, "conditional_disagg_decode_busy_threshold",
      KnobKind.OPTIONAL_NON_NEGATIVE,
      List.of("DYN_ROUTER_CONDITIONAL_DISAGG_DECODE_BUSY_THRESHOLD"),
      RouterConfig::decodeBusyThreshold, (d, v) -> d.decodeBusyThreshold = (Double) v),
  PREFILL_BUSY_THRESHOLD(Section.ROUTER, "conditional_disagg_prefill_busy_threshold",
      KnobKind.OPTIONAL_NON_NEGATIVE,
      List.of("DYN_ROUTER_CONDITIONAL_DISAGG_PREFILL_BUSY_THRESHOLD"),
      RouterConfig::prefillBusyThreshold, (d, v) -> d.prefillBusyThreshold = (Double) v),
  MIN_INITIAL_WORKERS(Section.ROUTER, "min_initial_workers", KnobKind.NON_NEGATIVE_INT,
      List.of("DYN_ROUTER_MIN_INITIAL_WORKERS"),
      RouterConfig::minInitialWorkers, (d, v) -> d.minInitialWorkers = (Integer) v),
  ACTIVE_REQUEST_EXPIRY_SECS(Section.ROUTER, "active_request_expiry_secs", KnobKind.POSITIVE,
      List.of("DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS"),
      RouterConfig::activeRequestExpirySecs, (d, v) -> d.activeRequestExpirySecs = (Double) v),
  TRACKING_HASH(Section.TRACKING, "hash", KnobKind.CHOICE,
      List.of("DYN_ROUTER_TRACKING_HASH"), List.of("public-xxh3-v1", "keyed-xxh3-v1"),
      RouterConfig::trackingHash, (d, v) -> d.trackingHash = (String) v),
  TRACKING_KEY_FILE(Section.TRACKING, "key_file", KnobKind.OPTIONAL_STRING,
      List.of("DYN_ROUTER_TRACKING_KEY_FILE"),
      RouterConfig::trackingKeyFile, (d, v) -> d.trackingKeyFile = (String) v),
  TRACKING_KEY_ID(Section.TRACKING, "key_id", KnobKind.OPTIONAL_STRING,
      List.of("DYN_ROUTER_TRACKING_KEY_ID"),
      RouterConfig::trackingKeyId, (d, v) -> d.trackingKeyId = (String) v);

  /** The config-file section a knob lives in. */
  enum Section {
    ROUTER,
    TRACKING
  }

  final Section section;
  final String jsonName;
  final KnobKind kind;
  final List<String> envNames;
  final List<String> choices;
  /** Null for write-only (deprecated) knobs. */
  final Function<RouterConfig, Object> getter;
  final BiConsumer<RouterConfigDraft, Object> setter;

  RouterKnob(Section section, String jsonName, KnobKind kind, List<String> envNames,
      Function<RouterConfig, Object> getter, BiConsumer<RouterConfigDraft, Object> setter) {
    this(section, jsonName, kind, envNames, List.of(), getter, setter);
  }

  RouterKnob(Section section, String jsonName, KnobKind kind, List<String> envNames,
      List<String> choices, Function<RouterConfig, Object> getter,
      BiConsumer<RouterConfigDraft, Object> setter) {
    this.section = section;
    this.jsonName = jsonName;
    this.kind = kind;
    this.envNames = envNames;
    this.choices = choices;
    this.getter = getter;
    this.setter = setter;
  }
}
