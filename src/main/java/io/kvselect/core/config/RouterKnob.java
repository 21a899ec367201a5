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
      RouterConfig::trackingKeyId, (d, v) -> d.trackingKeyId = (String) v),
  /** The selection policy: kv (default), kvc, sticky, least_loaded, round_robin. */
  POLICY(Section.ROUTER, "policy", KnobKind.CHOICE,
      List.of("KVSELECT_ROUTER_POLICY"), PolicySettings.NAMES,
      c -> c.selectionPolicy().name(), (d, v) -> d.selectionPolicy = d.selectionPolicy.withName((String) v)),
  KVC_ALPHA(Section.ROUTER, "kvc_alpha", KnobKind.NON_NEGATIVE,
      List.of("KVSELECT_KVC_ALPHA"),
      c -> c.selectionPolicy().kvc().alpha(),
      (d, v) -> d.selectionPolicy = d.selectionPolicy.withKvc(d.selectionPolicy.kvc().withAlpha((Double) v))),
  KVC_TAU_REJECT(Section.ROUTER, "kvc_tau_reject", KnobKind.POSITIVE_INT,
      List.of("KVSELECT_KVC_TAU_REJECT"),
      c -> c.selectionPolicy().kvc().tauReject(),
      (d, v) -> d.selectionPolicy = d.selectionPolicy.withKvc(d.selectionPolicy.kvc().withTauReject((Integer) v))),
  KVC_TAU_APPEND(Section.ROUTER, "kvc_tau_append", KnobKind.NON_NEGATIVE_INT,
      List.of("KVSELECT_KVC_TAU_APPEND"),
      c -> (int) Math.min(Integer.MAX_VALUE, c.selectionPolicy().kvc().tauAppend()),
      (d, v) -> d.selectionPolicy = d.selectionPolicy.withKvc(d.selectionPolicy.kvc().withTauAppend((Integer) v))),
  KVC_RHO(Section.ROUTER, "kvc_rho", KnobKind.UNIT,
      List.of("KVSELECT_KVC_RHO"),
      c -> c.selectionPolicy().kvc().rho(),
      (d, v) -> {
        if ((Double) v <= 0) {
          throw new ConfigException("router.kvc_rho must be in (0, 1], got " + v);
        }
        d.selectionPolicy = d.selectionPolicy.withKvc(d.selectionPolicy.kvc().withRho((Double) v));
      }),
  /** Unset (null) means |D| - 1. */
  KVC_EPSILON(Section.ROUTER, "kvc_epsilon", KnobKind.OPTIONAL_NON_NEGATIVE,
      List.of("KVSELECT_KVC_EPSILON"),
      c -> c.selectionPolicy().kvc().epsilon() == null ? null : c.selectionPolicy().kvc().epsilon().doubleValue(),
      (d, v) -> {
        Double e = (Double) v;
        if (e != null && (e != Math.rint(e) || e > Integer.MAX_VALUE)) {
          throw new ConfigException("router.kvc_epsilon must be a whole number, got " + e);
        }
        d.selectionPolicy = d.selectionPolicy.withKvc(
            d.selectionPolicy.kvc().withEpsilon(e == null ? null : e.intValue()));
      }),
  KVC_ADMIT_ACCOUNTING(Section.ROUTER, "kvc_admit_accounting", KnobKind.CHOICE,
      List.of("KVSELECT_KVC_ADMIT_ACCOUNTING"), List.of("literal", "net"),
      c -> c.selectionPolicy().kvc().accounting().wire(),
      (d, v) -> d.selectionPolicy = d.selectionPolicy.withKvc(
          d.selectionPolicy.kvc().withAccounting(io.kvselect.core.kvc.AdmitAccounting.parse((String) v)))),
  KVC_RESET_SCOPE(Section.ROUTER, "kvc_reset_scope", KnobKind.CHOICE,
      List.of("KVSELECT_KVC_RESET_SCOPE"), List.of("winner", "all"),
      c -> c.selectionPolicy().kvc().resetScope().wire(),
      (d, v) -> d.selectionPolicy = d.selectionPolicy.withKvc(
          d.selectionPolicy.kvc().withResetScope(io.kvselect.core.kvc.ResetScope.parse((String) v)))),
  /** The refinement: Admit also counts KV promised to unfinished requests on the worker. */
  KVC_ADMIT_WAITING(Section.ROUTER, "kvc_admit_waiting", KnobKind.BOOLEAN,
      List.of("KVSELECT_KVC_ADMIT_WAITING"),
      c -> c.selectionPolicy().kvc().countWaiting(),
      (d, v) -> d.selectionPolicy = d.selectionPolicy.withKvc(d.selectionPolicy.kvc().withCountWaiting((Boolean) v)));

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
