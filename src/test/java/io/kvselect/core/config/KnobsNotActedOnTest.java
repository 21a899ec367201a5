package io.kvselect.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Dynamo knobs kvselect parses but does not act on are named, so a setting is never silently ignored. */
class KnobsNotActedOnTest {

  @Test
  void defaultsAndActedOnKnobsNameNothing() {
    assertEquals(List.of(), RouterConfigLoader.knobsNotActedOn(RouterConfig.DEFAULTS));
    RouterConfig acted =
        RouterConfigLoader.fromEnv(
            RouterConfig.DEFAULTS,
            Map.of("DYN_ROUTER_TEMPERATURE", "0.5", "DYN_ROUTER_USE_KV_EVENTS", "false"));
    assertEquals(List.of(), RouterConfigLoader.knobsNotActedOn(acted));
  }

  @Test
  void everyInertKnobSetAwayFromItsDefaultIsNamedInTableOrder() {
    RouterConfig cfg =
        RouterConfigLoader.fromEnv(
            RouterConfig.DEFAULTS,
            Map.of(
                "DYN_ROUTER_QUEUE_THRESHOLD", "2.0",
                "DYN_ROUTER_QUEUE_POLICY", "wspt",
                "DYN_ROUTER_SHARED_CACHE_TYPE", "hicache",
                "DYN_ROUTER_PREFILL_LOAD_MODEL", "aic",
                "DYN_USE_REMOTE_INDEXER", "true"));
    // a shared cache type brings its multiplier's default along, and that one is inert too
    assertEquals(
        List.of(
            "router_prefill_load_model",
            "use_remote_indexer",
            "shared_cache_multiplier",
            "shared_cache_type"),
        RouterConfigLoader.knobsNotActedOn(cfg),
        "queueing knobs are acted on");
  }
}
