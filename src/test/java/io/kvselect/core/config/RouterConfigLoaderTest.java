package io.kvselect.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class RouterConfigLoaderTest {

  private static final RouterConfig D = RouterConfig.DEFAULTS;

  private static RouterConfig env(String... kv) {
    Map<String, String> env = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      env.put(kv[i], kv[i + 1]);
    }
    return RouterConfigLoader.fromEnv(D, env);
  }

  private static Arguments row(
      String var, String value, Function<RouterConfig, Object> get, Object expected) {
    return Arguments.of(var, value, get, expected);
  }

  static Stream<Arguments> envRows() {
    return Stream.of(
        row("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT", "0.5", r -> r.cost().overlapScoreCredit(), 0.5),
        row(
            "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY",
            "2",
            r -> r.cost().overlapScoreCreditDecay(),
            2.0),
        row("DYN_ROUTER_PREFILL_LOAD_SCALE", "3.5", r -> r.cost().prefillLoadScale(), 3.5),
        row("DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT", "2", r -> r.cost().prefillLoadScale(), 2.0),
        row("DYN_OVERLAP_SCORE_WEIGHT", "4", r -> r.cost().prefillLoadScale(), 4.0),
        row(
            "DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT",
            "0.25",
            r -> r.cost().decodeActiveRequestWeight(),
            0.25),
        row("DYN_ROUTER_HOST_CACHE_HIT_WEIGHT", "0.5", r -> r.cost().hostCacheHitWeight(), 0.5),
        row("DYN_ROUTER_DISK_CACHE_HIT_WEIGHT", "0.1", r -> r.cost().diskCacheHitWeight(), 0.1),
        row("DYN_ROUTER_TEMPERATURE", "0.7", r -> r.cost().temperature(), 0.7),
        row("DYN_ROUTER_USE_KV_EVENTS", "false", r -> r.index().useKvEvents(), false),
        row("DYN_USE_KV_EVENTS", "0", r -> r.index().useKvEvents(), false),
        row("DYN_ROUTER_REPLICA_SYNC", "on", r -> r.replica().sync(), true),
        row("DYN_ROUTER_TRACK_ACTIVE_BLOCKS", "no", r -> r.load().trackActiveBlocks(), false),
        row("DYN_ROUTER_TRACK_OUTPUT_BLOCKS", "yes", r -> r.load().trackOutputBlocks(), true),
        row("DYN_ROUTER_ASSUME_KV_REUSE", "OFF", r -> r.load().assumeKvReuse(), false),
        row("DYN_ROUTER_TRACK_PREFILL_TOKENS", "False", r -> r.load().trackPrefillTokens(), false),
        row("DYN_ROUTER_TRACKING_HASH", "keyed-xxh3-v1", r -> r.tracking().hash(), "keyed-xxh3-v1"),
        row(
            "DYN_ROUTER_TRACKING_KEY_FILE",
            "/k/key.bin",
            r -> r.tracking().keyFile(),
            "/k/key.bin"),
        row("DYN_ROUTER_TRACKING_KEY_ID", "7", r -> r.tracking().keyId(), "7"),
        row("DYN_ROUTER_PREFILL_LOAD_MODEL", "AIC", r -> r.load().prefillLoadModel(), "aic"),
        row("DYN_ROUTER_TTL_SECS", "30", r -> r.index().ttlSecs(), 30.0),
        row(
            "DYN_ROUTER_APPROXIMATE_CACHE_POLICY",
            "lru",
            r -> r.index().approximateCachePolicy(),
            "lru"),
        row("DYN_ROUTER_PREDICTED_TTL_SECS", "15", r -> r.index().predictedTtlSecs(), 15.0),
        row("DYN_ROUTER_QUEUE_THRESHOLD", "16", r -> r.queue().threshold(), 16.0),
        row("DYN_ROUTER_QUEUE_POLICY", "wspt", r -> r.queue().policy(), "wspt"),
        row(
            "DYN_ROUTER_POLICY_CONFIG",
            "/etc/policy.yaml",
            r -> r.queue().policyConfig(),
            "/etc/policy.yaml"),
        row("DYN_ROUTER_EVENT_THREADS", "8", r -> r.index().eventThreads(), 8),
        row("DYN_USE_REMOTE_INDEXER", "true", r -> r.index().useRemoteIndexer(), true),
        row(
            "DYN_ROUTER_SHARED_CACHE_MULTIPLIER",
            "0.3",
            r -> r.cost().sharedCacheMultiplier(),
            0.3),
        row("DYN_SHARED_CACHE_MULTIPLIER", "0.4", r -> r.cost().sharedCacheMultiplier(), 0.4),
        row("DYN_SHARED_CACHE_TYPE", "hicache", r -> r.cost().sharedCacheType(), "hicache"),
        row(
            "DYN_ROUTER_CONDITIONAL_DISAGG_DECODE_BUSY_THRESHOLD",
            "0.9",
            r -> r.load().decodeBusyThreshold(),
            0.9),
        row(
            "DYN_ROUTER_CONDITIONAL_DISAGG_PREFILL_BUSY_THRESHOLD",
            "2000",
            r -> r.load().prefillBusyThreshold(),
            2000.0),
        row("DYN_ROUTER_MIN_INITIAL_WORKERS", "3", r -> r.replica().minInitialWorkers(), 3),
        row(
            "DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS",
            "60",
            r -> r.load().activeRequestExpirySecs(),
            60.0));
  }

  @ParameterizedTest(name = "{0}={1}")
  @MethodSource("envRows")
  void eachVariableSetsItsKnob(
      String var, String value, Function<RouterConfig, Object> get, Object expected) {
    assertEquals(expected, get.apply(env(var, value)));
    assertTrue(RouterConfigLoader.environmentVariables().contains(var));
  }

  @Test
  void emptyEnvironmentKeepsDefaultsAndBlankIsUnset() {
    assertEquals(D, RouterConfigLoader.fromEnv(D, Map.of()));
    assertEquals(D, env("DYN_ROUTER_TEMPERATURE", "  ", "UNRELATED", "x"));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "1, true",
    "0, false",
    "TRUE, true",
    "false, false",
    "Yes, true",
    "no, false",
    "ON, true",
    "off, false",
    "' true ', true"
  })
  void booleanWords(String text, boolean expected) {
    assertEquals(expected, env("DYN_ROUTER_TRACK_OUTPUT_BLOCKS", text).load().trackOutputBlocks());
  }

  @Test
  void deprecatedWeightSetsScaleAndZeroAlsoZeroesCredit() {
    RouterConfig two = env("DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT", "2");
    assertEquals(1.0, two.cost().overlapScoreCredit());
    RouterConfig zero = env("DYN_OVERLAP_SCORE_WEIGHT", "0");
    assertEquals(0.0, zero.cost().prefillLoadScale());
    assertEquals(0.0, zero.cost().overlapScoreCredit());
    // As in Dynamo, the deprecated variable is applied last and wins.
    assertEquals(
        2.0,
        env("DYN_ROUTER_PREFILL_LOAD_SCALE", "5", "DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT", "2")
            .cost()
            .prefillLoadScale());
    assertEquals(
        3.0,
        env("DYN_ROUTER_KV_OVERLAP_SCORE_WEIGHT", "3", "DYN_OVERLAP_SCORE_WEIGHT", "0")
            .cost()
            .prefillLoadScale());
  }

  @Test
  void primaryVariableWinsOverAlias() {
    assertTrue(
        env("DYN_ROUTER_USE_KV_EVENTS", "true", "DYN_USE_KV_EVENTS", "false")
            .index()
            .useKvEvents());
  }

  @Test
  void sharedCacheTypeRaisesAZeroMultiplierUnlessOneIsGiven() {
    assertEquals(0.5, env("DYN_SHARED_CACHE_TYPE", "hicache").cost().sharedCacheMultiplier());
    assertEquals(
        0.2,
        env("DYN_SHARED_CACHE_TYPE", "hicache", "DYN_SHARED_CACHE_MULTIPLIER", "0.2")
            .cost()
            .sharedCacheMultiplier());
    assertNull(env("DYN_SHARED_CACHE_TYPE", "none").cost().sharedCacheType());
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT | 1.5 | DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT must be in"
            + " [0, 1], got 1.5; overlap_score_weight was renamed to prefill_load_scale",
        "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT | -0.1 | DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT must be in"
            + " [0, 1], got -0.1",
        "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT | high | DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT must be a"
            + " number, got 'high'",
        "DYN_ROUTER_TEMPERATURE | -1 | DYN_ROUTER_TEMPERATURE must be a finite number >= 0",
        "DYN_ROUTER_TEMPERATURE | NaN | DYN_ROUTER_TEMPERATURE must be a finite number >= 0",
        "DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY | -2 | DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT_DECAY"
            + " must be a finite number >= 0",
        "DYN_ROUTER_PREFILL_LOAD_SCALE | -1 | DYN_ROUTER_PREFILL_LOAD_SCALE must be a finite number",
        "DYN_OVERLAP_SCORE_WEIGHT | -1 | DYN_OVERLAP_SCORE_WEIGHT must be a finite number >= 0",
        "DYN_ROUTER_HOST_CACHE_HIT_WEIGHT | -0.5 | DYN_ROUTER_HOST_CACHE_HIT_WEIGHT must be in [0, 1]",
        "DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT | -3 | DYN_ROUTER_DECODE_ACTIVE_REQUEST_WEIGHT must"
            + " be a finite number >= 0",
        "DYN_ROUTER_TTL_SECS | 0 | DYN_ROUTER_TTL_SECS must be a finite number > 0",
        "DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS | -5 | DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS must be",
        "DYN_ROUTER_QUEUE_POLICY | sjf | DYN_ROUTER_QUEUE_POLICY must be one of fcfs, lcfs, wspt,"
            + " got 'sjf'",
        "DYN_ROUTER_APPROXIMATE_CACHE_POLICY | fifo | DYN_ROUTER_APPROXIMATE_CACHE_POLICY must be"
            + " one of ttl, lru",
        "DYN_ROUTER_TRACKING_HASH | md5 | DYN_ROUTER_TRACKING_HASH must be one of public-xxh3-v1,"
            + " keyed-xxh3-v1",
        "DYN_ROUTER_USE_KV_EVENTS | maybe | DYN_ROUTER_USE_KV_EVENTS must be a boolean",
        "DYN_ROUTER_EVENT_THREADS | 0 | DYN_ROUTER_EVENT_THREADS must be an integer >= 1, got 0",
        "DYN_ROUTER_EVENT_THREADS | 2.5 | DYN_ROUTER_EVENT_THREADS must be an integer, got '2.5'",
        "DYN_ROUTER_MIN_INITIAL_WORKERS | -1 | DYN_ROUTER_MIN_INITIAL_WORKERS must be an integer >= 0",
        "DYN_SHARED_CACHE_TYPE | redis | DYN_SHARED_CACHE_TYPE must be one of hicache, none",
      })
  void badEnvironmentValuesNameTheVariable(String var, String value, String message) {
    ConfigException e = assertThrows(ConfigException.class, () -> env(var, value));
    assertTrue(e.getMessage().startsWith(message), e.getMessage());
    assertFalse(e.getMessage().contains("\n"));
  }

  @Test
  void jsonRoundTripOfTheDefaults() {
    Map<String, Object> json = RouterConfigLoader.routerJson(D);
    assertEquals(37, json.size(), "28 Dynamo knobs plus policy and the 8 kvc_* knobs");
    assertFalse(json.containsKey("overlap_score_weight"));
    // every knob off its default, so that binding the defaults' section back touches each one
    RouterConfig other =
        RouterConfig.builder()
            .overlapScoreCredit(0.5)
            .overlapScoreCreditDecay(1)
            .prefillLoadScale(2)
            .decodeActiveRequestWeight(3)
            .hostCacheHitWeight(0.1)
            .diskCacheHitWeight(0.2)
            .routerTemperature(0.3)
            .useKvEvents(false)
            .trackActiveBlocks(false)
            .trackOutputBlocks(true)
            .assumeKvReuse(false)
            .trackPrefillTokens(false)
            .routerTtlSecs(10)
            .approximateCachePolicy("lru")
            .predictedTtlSecs(5.0)
            .queueThreshold(4.0)
            .queuePolicy("lcfs")
            .sharedCacheMultiplier(0.5)
            .decodeBusyThreshold(1.0)
            .prefillBusyThreshold(2.0)
            .activeRequestExpirySecs(30)
            .trackingHash("keyed-xxh3-v1")
            .replicaSync(true)
            .prefillLoadModel("aic")
            .policyConfig("/p.yaml")
            .eventThreads(8)
            .useRemoteIndexer(true)
            .sharedCacheType("hicache")
            .minInitialWorkers(2)
            .policy("kvc")
            .kvcAlpha(2)
            .kvcTauReject(5)
            .kvcTauAppend(7)
            .kvcRho(0.5)
            .kvcEpsilon(1)
            .kvcAdmitAccounting("net")
            .kvcResetScope("all")
            .kvcAdmitWaiting(true)
            .build();
    for (Map.Entry<String, Object> e : RouterConfigLoader.routerJson(other).entrySet()) {
      assertFalse(
          java.util.Objects.equals(e.getValue(), json.get(e.getKey())), e.getKey() + " differs");
    }
    RouterConfig routerOnly = RouterConfigLoader.fromJson(other, json);
    assertEquals("keyed-xxh3-v1", routerOnly.tracking().hash(), "tracking is its own section");
    assertEquals(
        D,
        RouterConfigLoader.trackingFromJson(
            routerOnly, RouterConfigLoader.trackingJson(D), "tracking"));
  }

  @Test
  void jsonSubsetOverridesOnlyWhatItNames() {
    Map<String, Object> section = new LinkedHashMap<>();
    section.put("overlap_score_credit", 0.25);
    section.put("router_queue_threshold", 8);
    section.put("use_kv_events", false);
    section.put("router_event_threads", 2);
    RouterConfig c = RouterConfigLoader.fromJson(D, section);
    assertEquals(0.25, c.cost().overlapScoreCredit());
    assertEquals(8.0, c.queue().threshold());
    assertFalse(c.index().useKvEvents());
    assertEquals(2, c.index().eventThreads());
    assertEquals(D.cost().prefillLoadScale(), c.cost().prefillLoadScale());
    Map<String, Object> unset = new HashMap<>();
    unset.put("router_queue_threshold", null);
    assertNull(RouterConfigLoader.fromJson(c, unset).queue().threshold());
    assertEquals(
        0.0,
        RouterConfigLoader.fromJson(D, Map.of("overlap_score_weight", 0))
            .cost()
            .overlapScoreCredit());
  }

  static Stream<Arguments> badJson() {
    Map<String, Object> nullCredit = new HashMap<>();
    nullCredit.put("overlap_score_credit", null);
    return Stream.of(
        Arguments.of(
            Map.of("overlap_score_credit", "high"),
            "config field router.overlap_score_credit must be a number"),
        Arguments.of(nullCredit, "config field router.overlap_score_credit must be a number"),
        Arguments.of(
            Map.of("overlap_score_credit", 2),
            "config field router.overlap_score_credit must be in [0, 1], got 2.0;"),
        Arguments.of(
            Map.of("use_kv_events", "yes"), "config field router.use_kv_events must be a boolean"),
        Arguments.of(
            Map.of("router_event_threads", 1.5),
            "config field router.router_event_threads must be an integer"),
        Arguments.of(
            Map.of("router_queue_policy", "sjf"),
            "config field router.router_queue_policy must be one of fcfs, lcfs, wspt"),
        Arguments.of(
            Map.of("overlap_score_credt", 1),
            "config field router.overlap_score_credt is not a known router setting"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badJson")
  void badJsonNamesTheDottedField(Map<String, Object> section, String message) {
    ConfigException e =
        assertThrows(ConfigException.class, () -> RouterConfigLoader.fromJson(D, section));
    assertTrue(e.getMessage().startsWith(message), e.getMessage());
  }

  @Test
  void crossKnobRulesOfDynamo() {
    RouterConfigLoader.validate(D);
    ConfigException predicted =
        assertThrows(
            ConfigException.class,
            () ->
                RouterConfigLoader.validate(
                    env("DYN_ROUTER_PREDICTED_TTL_SECS", "5", "DYN_USE_KV_EVENTS", "false")));
    assertTrue(predicted.getMessage().contains("DYN_ROUTER_PREDICTED_TTL_SECS"));
    ConfigException lru =
        assertThrows(
            ConfigException.class,
            () -> RouterConfigLoader.validate(env("DYN_ROUTER_APPROXIMATE_CACHE_POLICY", "lru")));
    assertTrue(lru.getMessage().contains("use_kv_events=false"));
    RouterConfigLoader.validate(
        env("DYN_ROUTER_APPROXIMATE_CACHE_POLICY", "lru", "DYN_ROUTER_USE_KV_EVENTS", "0"));
  }

  @Test
  void overrideKeepsTheAddedKnobs() {
    RouterConfig c = env("DYN_ROUTER_EVENT_THREADS", "9", "DYN_ROUTER_TRACKING_KEY_ID", "k1");
    RouterConfig o =
        c.with(new RouterConfigOverride(0.5, null, null, null, null, null, null, null));
    assertEquals(9, o.index().eventThreads());
    assertEquals("k1", o.tracking().keyId());
    assertEquals(0.5, o.cost().overlapScoreCredit());
  }
}
