package io.kvselect.core.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which registrations are schedulable, with Dynamo's reason texts, one rule at a time. */
class SchedulabilityTest {

  private static final RouterConfig NO_EVENTS =
      RouterConfigLoader.fromEnv(
          RouterConfig.DEFAULTS, Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
  private static final RouterConfig EVENTS = RouterConfig.DEFAULTS;
  private static final RouterConfig QUEUEING =
      RouterConfigLoader.fromEnv(
          RouterConfig.DEFAULTS,
          Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "0.5"));
  private static final RouterConfig NO_CREDIT =
      RouterConfigLoader.fromEnv(
          RouterConfig.DEFAULTS, Map.of("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT", "0"));

  /** A full spec; every argument that a rule reads is explicit. */
  static WorkerSpec spec(
      String endpoint,
      Integer blockSize,
      int startRank,
      int dpSize,
      Long maxBatched,
      String replay,
      String kvEvents,
      Map<Integer, String> kvEventsPerRank,
      boolean eagle) {
    return WorkerSpec.builder(7)
        .modelName("m")
        .routingGroup("g")
        .endpoint(endpoint)
        .kvEventsEndpoint(kvEvents)
        .kvEventsEndpoints(kvEventsPerRank)
        .replayEndpoint(replay)
        .blockSize(blockSize)
        .dataParallelStartRank(startRank)
        .dataParallelSize(dpSize)
        .maxNumBatchedTokens(maxBatched)
        .isEagle(eagle)
        .build();
  }

  private static WorkerSpec plain(String endpoint, Integer blockSize, int dpSize) {
    return spec(endpoint, blockSize, 0, dpSize, null, null, null, null, false);
  }

  @Test
  void aCompleteRegistrationHasNoReasons() {
    assertEquals(
        List.of(), Schedulability.reasons(plain("http://w", 16, 1), NO_EVENTS, null, null));
    assertEquals(
        List.of(),
        Schedulability.reasons(plain("http://w", 1, 1), NO_EVENTS, 1, false),
        "block size 1 is valid and matches the partition");
  }

  @Test
  void endpointIsRequiredAndMustNotBeBlank() {
    assertEquals(
        List.of("endpoint is required"),
        Schedulability.reasons(plain(null, 16, 1), NO_EVENTS, null, null));
    assertEquals(
        List.of("endpoint is required"),
        Schedulability.reasons(plain(" \t", 16, 1), NO_EVENTS, null, null));
  }

  @Test
  void blockSizeIsRequiredAndPositive() {
    assertEquals(
        List.of("block_size is required"),
        Schedulability.reasons(plain("http://w", null, 1), NO_EVENTS, null, null));
    assertEquals(
        List.of("block_size must be greater than 0"),
        Schedulability.reasons(plain("http://w", 0, 1), NO_EVENTS, null, null));
    assertEquals(
        List.of("block_size must be greater than 0"),
        Schedulability.reasons(plain("http://w", -4, 1), NO_EVENTS, null, null));
  }

  @Test
  void dataParallelSizeMustBePositive() {
    assertEquals(
        List.of("data_parallel_size must be greater than 0"),
        Schedulability.reasons(plain("http://w", 16, 0), NO_EVENTS, null, null));
    assertEquals(
        List.of(), Schedulability.reasons(plain("http://w", 16, 2), NO_EVENTS, null, null));
  }

  @Test
  void queueingRequiresMaxNumBatchedTokens() {
    assertEquals(
        List.of("max_num_batched_tokens is required while queueing is enabled"),
        Schedulability.reasons(plain("http://w", 16, 1), QUEUEING, null, null));
    assertEquals(
        List.of(),
        Schedulability.reasons(
            spec("http://w", 16, 0, 1, 8192L, null, null, null, false), QUEUEING, null, null));
    assertEquals(
        List.of(),
        Schedulability.reasons(
            spec("http://w", 16, 0, 1, null, null, null, null, false), NO_EVENTS, null, null),
        "without queueing the capacity is optional");
  }

  @Test
  void replayEndpointOnlyWithOneRank() {
    assertEquals(
        List.of("replay_endpoint is only supported when data_parallel_size is 1"),
        Schedulability.reasons(
            spec("http://w", 16, 0, 2, null, "tcp://127.0.0.1:5", null, null, false),
            NO_EVENTS,
            null,
            null));
    assertEquals(
        List.of(),
        Schedulability.reasons(
            spec("http://w", 16, 0, 1, null, "tcp://127.0.0.1:5", null, null, false),
            NO_EVENTS,
            null,
            null));
  }

  @Test
  void kvEventsNeedAnEndpointForEveryRank() {
    assertEquals(
        List.of(
            "kv_events endpoint is required for dp_rank 0"
                + " (set kv_events_endpoint, or kv_events_endpoints for each rank)"),
        Schedulability.reasons(plain("http://w", 16, 1), EVENTS, null, null));
    assertEquals(
        List.of(),
        Schedulability.reasons(
            spec("http://w", 16, 0, 1, null, null, "tcp://127.0.0.1:5557", null, false),
            EVENTS,
            null,
            null),
        "one rank may use the single endpoint");
    assertEquals(
        List.of(
            "kv_events endpoint is required for dp_rank 0"
                + " (set kv_events_endpoint, or kv_events_endpoints for each rank)"),
        Schedulability.reasons(
            spec("http://w", 16, 0, 1, null, null, "  ", null, false), EVENTS, null, null),
        "a blank endpoint is none");
    assertEquals(
        List.of(
            "kv_events endpoint is required for dp_rank 5"
                + " (set kv_events_endpoint, or kv_events_endpoints for each rank)"),
        Schedulability.reasons(
            spec(
                "http://w",
                16,
                4,
                2,
                null,
                null,
                "tcp://127.0.0.1:5557",
                Map.of(4, "tcp://127.0.0.1:5558"),
                false),
            EVENTS,
            null,
            null),
        "the single endpoint does not serve several ranks; ranks are global");
    assertEquals(
        List.of(),
        Schedulability.reasons(
            spec(
                "http://w",
                16,
                4,
                2,
                null,
                null,
                null,
                Map.of(4, "tcp://a:1", 5, "tcp://a:2"),
                false),
            EVENTS,
            null,
            null));
    assertEquals(
        List.of(),
        Schedulability.reasons(plain("http://w", 16, 1), NO_CREDIT, null, null),
        "without overlap credit the events are not needed");
  }

  @Test
  void reconciliationRulesApplyOnlyToAnOtherwiseCompleteWorker() {
    assertEquals(
        List.of("reconciliation failed: block_size mismatch for m:g existing=32 requested=16"),
        Schedulability.reasons(plain("http://w", 16, 1), NO_EVENTS, 32, null));
    assertEquals(
        List.of("reconciliation failed: is_eagle mismatch for m:g existing=true requested=false"),
        Schedulability.reasons(plain("http://w", 16, 1), NO_EVENTS, 16, true));
    assertEquals(
        List.of(),
        Schedulability.reasons(
            spec("http://w", 16, 0, 1, null, null, null, null, true), NO_EVENTS, 16, true));
    assertEquals(
        List.of("endpoint is required"),
        Schedulability.reasons(plain(null, 16, 1), NO_EVENTS, 32, true),
        "an incomplete worker is not reconciled");
    assertEquals(
        List.of("endpoint is required"),
        Schedulability.reasons(
            spec(null, 16, 0, 1, null, null, null, null, false), NO_EVENTS, null, true));
  }

  @Test
  void everyReasonIsReportedInOrder() {
    WorkerSpec bad = spec(null, null, 0, 0, null, "tcp://r:1", null, null, false);
    assertEquals(
        List.of(
            "endpoint is required",
            "block_size is required",
            "data_parallel_size must be greater than 0",
            "max_num_batched_tokens is required while queueing is enabled"),
        Schedulability.reasons(bad, QUEUEING, 16, false));
  }
}
