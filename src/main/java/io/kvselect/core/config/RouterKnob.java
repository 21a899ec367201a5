package io.kvselect.core.config;

import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The table of router knobs: config-file name (also the name {@link RouterConfigBuilder} binds),
 * environment variables (first present wins), value kind, and how to read the knob. Declaration
 * order is application order, so the deprecated {@code overlap_score_weight} lands after {@code
 * prefill_load_scale} and overrides it, as in Dynamo. Immutable.
 */
enum RouterKnob {
  OVERLAP_SCORE_CREDIT(
      Section.ROUTER,
      "overlap_score_credit",
      KnobKind.CREDIT,
      List.of("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT"),
      c -> c.cost().overlapScoreCredit()),
  OVERLAP_SCORE_CREDIT_DECAY(
      Section.ROUTER,
      "overlap_score_credit_decay",
      KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY"),
      c -> c.cost().overlapScoreCreditDecay()),
  PREFILL_LOAD_SCALE(
      Section.ROUTER,
      "prefill_load_scale",
      KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_PREFILL_LOAD_SCALE"),
      c -> c.cost().prefillLoadScale()),
  /** Deprecated: sets prefill_load_scale, and a zero also zeroes the credit. Never written. */
  OVERLAP_SCORE_WEIGHT(
      Section.ROUTER,
      "overlap_score_weight",
      KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT", "DYN_OVERLAP_SCORE_WEIGHT"),
      null),
  DECODE_ACTIVE_REQUEST_WEIGHT(
      Section.ROUTER,
      "decode_active_request_weight",
      KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT"),
      c -> c.cost().decodeActiveRequestWeight()),
  HOST_CACHE_HIT_WEIGHT(
      Section.ROUTER,
      "host_cache_hit_weight",
      KnobKind.UNIT,
      List.of("DYN_ROUTER_HOST_CACHE_HIT_WEIGHT"),
      c -> c.cost().hostCacheHitWeight()),
  DISK_CACHE_HIT_WEIGHT(
      Section.ROUTER,
      "disk_cache_hit_weight",
      KnobKind.UNIT,
      List.of("DYN_ROUTER_DISK_CACHE_HIT_WEIGHT"),
      c -> c.cost().diskCacheHitWeight()),
  ROUTER_TEMPERATURE(
      Section.ROUTER,
      "router_temperature",
      KnobKind.NON_NEGATIVE,
      List.of("DYN_ROUTER_TEMPERATURE"),
      c -> c.cost().temperature()),
  USE_KV_EVENTS(
      Section.ROUTER,
      "use_kv_events",
      KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_USE_KV_EVENTS", "DYN_USE_KV_EVENTS"),
      c -> c.index().useKvEvents()),
  REPLICA_SYNC(
      Section.ROUTER,
      "router_replica_sync",
      KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_REPLICA_SYNC"),
      c -> c.replica().sync()),
  TRACK_ACTIVE_BLOCKS(
      Section.ROUTER,
      "router_track_active_blocks",
      KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_TRACK_ACTIVE_BLOCKS"),
      c -> c.load().trackActiveBlocks()),
  TRACK_OUTPUT_BLOCKS(
      Section.ROUTER,
      "router_track_output_blocks",
      KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_TRACK_OUTPUT_BLOCKS"),
      c -> c.load().trackOutputBlocks()),
  ASSUME_KV_REUSE(
      Section.ROUTER,
      "router_assume_kv_reuse",
      KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_ASSUME_KV_REUSE"),
      c -> c.load().assumeKvReuse()),
  TRACK_PREFILL_TOKENS(
      Section.ROUTER,
      "router_track_prefill_tokens",
      KnobKind.BOOLEAN,
      List.of("DYN_ROUTER_TRACK_PREFILL_TOKENS"),
      c -> c.load().trackPrefillTokens()),
  PREFILL_LOAD_MODEL(
      Section.ROUTER,
      "router_prefill_load_model",
      KnobKind.CHOICE,
      List.of("DYN_ROUTER_PREFILL_LOAD_MODEL"),
      List.of("none", "aic"),
      c -> c.load().prefillLoadModel()),
  TTL_SECS(
      Section.ROUTER,
      "router_ttl_secs",
      KnobKind.POSITIVE,
      List.of("DYN_ROUTER_TTL_SECS"),
      c -> c.index().ttlSecs()),
  APPROXIMATE_CACHE_POLICY(
      Section.ROUTER,
      "router_approximate_cache_policy",
      KnobKind.CHOICE,
      List.of("DYN_ROUTER_APPROXIMATE_CACHE_POLICY"),
      List.of("ttl", "lru"),
      c -> c.index().approximateCachePolicy()),
  PREDICTED_TTL_SECS(
      Section.ROUTER,
      "router_predicted_ttl_secs",
      KnobKind.OPTIONAL_POSITIVE,
      List.of("DYN_ROUTER_PREDICTED_TTL_SECS"),
      c -> c.index().predictedTtlSecs()),
  QUEUE_THRESHOLD(
      Section.ROUTER,
      "router_queue_threshold",
      KnobKind.OPTIONAL_NON_NEGATIVE,
      List.of("DYN_ROUTER_QUEUE_THRESHOLD"),
      c -> c.queue().threshold()),
  QUEUE_POLICY(
      Section.ROUTER,
      "router_queue_policy",
      KnobKind.CHOICE,
      List.of("DYN_ROUTER_QUEUE_POLICY"),
      List.of("fcfs", "lcfs", "wspt"),
      c -> c.queue().policy()),
  POLICY_CONFIG(
      Section.ROUTER,
      "router_policy_config",
      KnobKind.OPTIONAL_STRING,
      List.of("DYN_ROUTER_POLICY_CONFIG"),
      c -> c.queue().policyConfig()),
  EVENT_THREADS(
      Section.ROUTER,
      "router_event_threads",
      KnobKind.POSITIVE_INT,
      List.of("DYN_ROUTER_EVENT_THREADS"),
      c -> c.index().eventThreads()),
  USE_REMOTE_INDEXER(
      Section.ROUTER,
      "use_remote_indexer",
      KnobKind.BOOLEAN,
      List.of("DYN_USE_REMOTE_INDEXER"),
      c -> c.index().useRemoteIndexer()),
  SHARED_CACHE_MULTIPLIER(
      Section.ROUTER,
      "shared_cache_multiplier",
      KnobKind.UNIT,
      List.of("DYN_ROUTER_SHARED_CACHE_MULTIPLIER", "DYN_SHARED_CACHE_MULTIPLIER"),
      c -> c.cost().sharedCacheMultiplier()),
  SHARED_CACHE_TYPE(
      Section.ROUTER,
      "shared_cache_type",
      KnobKind.OPTIONAL_CHOICE,
      List.of("DYN_ROUTER_SHARED_CACHE_TYPE", "DYN_SHARED_CACHE_TYPE"),
      List.of("hicache"),
      c -> c.cost().sharedCacheType()),
  DECODE_BUSY_THRESHOLD(
      Section.ROUTER,
      "conditional_disagg_decode_busy_threshold",
      KnobKind.OPTIONAL_NON_NEGATIVE,
      List.of("DYN_ROUTER_CONDITIONAL_DISAGG_DECODE_BUSY_THRESHOLD"),
      c -> c.load().decodeBusyThreshold()),
  PREFILL_BUSY_THRESHOLD(
      Section.ROUTER,
      "conditional_disagg_prefill_busy_threshold",
      KnobKind.OPTIONAL_NON_NEGATIVE,
      List.of("DYN_ROUTER_CONDITIONAL_DISAGG_PREFILL_BUSY_THRESHOLD"),
      c -> c.load().prefillBusyThreshold()),
  MIN_INITIAL_WORKERS(
      Section.ROUTER,
      "min_initial_workers",
      KnobKind.NON_NEGATIVE_INT,
      List.of("DYN_ROUTER_MIN_INITIAL_WORKERS"),
      c -> c.replica().minInitialWorkers()),
  ACTIVE_REQUEST_EXPIRY_SECS(
      Section.ROUTER,
      "active_request_expiry_secs",
      KnobKind.POSITIVE,
      List.of("DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS"),
      c -> c.load().activeRequestExpirySecs()),
  TRACKING_HASH(
      Section.TRACKING,
      "hash",
      KnobKind.CHOICE,
      List.of("DYN_ROUTER_TRACKING_HASH"),
      List.of("public-xxh3-v1", "keyed-xxh3-v1"),
      c -> c.tracking().hash()),
  TRACKING_KEY_FILE(
      Section.TRACKING,
      "key_file",
      KnobKind.OPTIONAL_STRING,
      List.of("DYN_ROUTER_TRACKING_KEY_FILE"),
      c -> c.tracking().keyFile()),
  TRACKING_KEY_ID(
      Section.TRACKING,
      "key_id",
      KnobKind.OPTIONAL_STRING,
      List.of("DYN_ROUTER_TRACKING_KEY_ID"),
      c -> c.tracking().keyId()),
  /** The selection policy: kv (default), kvc, sticky, least_loaded, round_robin. */
  POLICY(
      Section.ROUTER,
      "policy",
      KnobKind.CHOICE,
      List.of("KVSELECT_ROUTER_POLICY"),
      PolicySettings.NAMES,
      c -> c.selectionPolicy().name()),
  KVC_ALPHA(
      Section.ROUTER,
      "kvc_alpha",
      KnobKind.NON_NEGATIVE,
      List.of("KVSELECT_KVC_ALPHA"),
      c -> c.selectionPolicy().kvc().alpha()),
  KVC_TAU_REJECT(
      Section.ROUTER,
      "kvc_tau_reject",
      KnobKind.POSITIVE_INT,
      List.of("KVSELECT_KVC_TAU_REJECT"),
      c -> c.selectionPolicy().kvc().tauReject()),
  KVC_TAU_APPEND(
      Section.ROUTER,
      "kvc_tau_append",
      KnobKind.NON_NEGATIVE_INT,
      List.of("KVSELECT_KVC_TAU_APPEND"),
      c -> (int) Math.min(Integer.MAX_VALUE, c.selectionPolicy().kvc().tauAppend())),
  KVC_RHO(
      Section.ROUTER,
      "kvc_rho",
      KnobKind.UNIT,
      List.of("KVSELECT_KVC_RHO"),
      List.of(),
      c -> c.selectionPolicy().kvc().rho(),
      v -> {
        if ((Double) v <= 0) {
          throw new ConfigException("router.kvc_rho must be in (0, 1], got " + v);
        }
        return v;
      }),
  /** Unset (null) means |D| - 1. */
  KVC_EPSILON(
      Section.ROUTER,
      "kvc_epsilon",
      KnobKind.OPTIONAL_NON_NEGATIVE,
      List.of("KVSELECT_KVC_EPSILON"),
      List.of(),
      c ->
          c.selectionPolicy().kvc().epsilon() == null
              ? null
              : c.selectionPolicy().kvc().epsilon().doubleValue(),
      v -> {
        Double e = (Double) v;
        if (e != null && (e != Math.rint(e) || e > Integer.MAX_VALUE)) {
          throw new ConfigException("router.kvc_epsilon must be a whole number, got " + e);
        }
        return e == null ? null : e.intValue();
      }),
  KVC_ADMIT_ACCOUNTING(
      Section.ROUTER,
      "kvc_admit_accounting",
      KnobKind.CHOICE,
      List.of("KVSELECT_KVC_ADMIT_ACCOUNTING"),
      List.of("literal", "net"),
      c -> c.selectionPolicy().kvc().accounting().wire()),
  KVC_RESET_SCOPE(
      Section.ROUTER,
      "kvc_reset_scope",
      KnobKind.CHOICE,
      List.of("KVSELECT_KVC_RESET_SCOPE"),
      List.of("winner", "all"),
      c -> c.selectionPolicy().kvc().resetScope().wire()),
  /** The refinement: Admit also counts KV promised to unfinished requests on the worker. */
  KVC_ADMIT_WAITING(
      Section.ROUTER,
      "kvc_admit_waiting",
      KnobKind.BOOLEAN,
      List.of("KVSELECT_KVC_ADMIT_WAITING"),
      c -> c.selectionPolicy().kvc().countWaiting());

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

  /** A check beyond the kind's range, and the value's conversion to the setter's type. */
  final UnaryOperator<Object> refine;

  RouterKnob(
      Section section,
      String jsonName,
      KnobKind kind,
      List<String> envNames,
      Function<RouterConfig, Object> getter) {
    this(section, jsonName, kind, envNames, List.of(), getter, v -> v);
  }

  RouterKnob(
      Section section,
      String jsonName,
      KnobKind kind,
      List<String> envNames,
      List<String> choices,
      Function<RouterConfig, Object> getter) {
    this(section, jsonName, kind, envNames, choices, getter, v -> v);
  }

  RouterKnob(
      Section section,
      String jsonName,
      KnobKind kind,
      List<String> envNames,
      List<String> choices,
      Function<RouterConfig, Object> getter,
      UnaryOperator<Object> refine) {
    this.section = section;
    this.jsonName = jsonName;
    this.kind = kind;
    this.envNames = envNames;
    this.choices = choices;
    this.getter = getter;
    this.refine = refine;
  }

  /** The knob's value as read from a layer: checked, and of the type its setter binds. */
  Object read(String label, Object raw, boolean fromText) {
    return refine.apply(
        fromText
            ? kind.fromText(label, (String) raw, choices)
            : kind.fromJson(label, raw, choices));
  }
}
