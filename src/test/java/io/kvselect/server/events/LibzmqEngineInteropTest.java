package io.kvselect.server.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Proves that a real kvselect node ingests KV events from an independent libzmq publisher exactly
 * as vLLM and SGLang publish them. The publisher is {@code interop/engine.py} under Debian's
 * {@code /usr/bin/python3} (python3-zmq = libzmq 4.3, python3-msgpack), see {@link ScriptedEngine};
 * the node runs in-process on 127.0.0.1 with its JeroMQ SUB and replay DEALER.
 *
 * <p>Proven, with {@code /overlap_scores} device blocks compared after every step to
 * {@link HeldBlocks}, the test's own record of what the engine holds (bounded polling):
 * <ul>
 *   <li>the engine's payloads are byte for byte the {@code kv_events_wire.md} §4 vectors and its
 *       replay replies have the §1.6/§4.4 frames, in both layouts (so the rest tests real layouts);
 *   <li>stores (single and multi-block, chained by parent), removals (also of a middle block and of
 *       unknown hashes), several events in one batch, and AllBlocksCleared, for every wire format
 *       (vLLM 0.26 maps, vLLM arrays, SGLang arrays, SGLang maps) times every hash representation
 *       (u64 ints, negative int64, 32-byte bins), removing in a different representation of the same
 *       64 bits than the one stored;
 *   <li>blocks stored before the worker was registered are recovered by replay (slow joiner),
 *       with replies in the vLLM 0.26 topic layout and in the legacy layout;
 *   <li>a forward gap (a batch never published) is recovered by replay, in both layouts;
 *   <li>an engine restart (sequence back to 0) drops the blocks of the old process.
 * </ul>
 * Fails, never skips, when {@code /usr/bin/python3} lacks zmq or msgpack ({@code .ci/run} installs them).
 */
class LibzmqEngineInteropTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int BS = 4;
  private static final long WORKER = 1;
  private final HttpClient http = HttpClient.newHttpClient();
  private final Random rnd = new Random(20260901);
  private final HeldBlocks truth = new HeldBlocks(BS);
  private final List<Chain> probes = new ArrayList<>();
  private int nextToken = 150_000;
  private KvselectNode node;
  private ScriptedEngine engine;

  /** A prompt of whole blocks and the opaque engine hash of each block. */
  private record Chain(int[] tokens, long[] ids) {}

  @BeforeAll
  static void libzmqPythonIsInstalled() throws Exception {
    ScriptedEngine.requireLibzmqPython();
  }

  @BeforeEach
  void startNode() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {"--host", "127.0.0.1", "--port", "0", "--threads", "2"}, Map.of());
    node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    try {
      if (engine != null) {
        engine.close();
      }
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  static Stream<Arguments> formatsAndHashes() {
    List<Arguments> out = new ArrayList<>();
    for (String format : List.of("vllm_map", "vllm_array", "sglang_array", "sglang_map")) {
      for (String hashes : List.of("int", "negative_int", "bin32")) {
        out.add(Arguments.of(format, hashes));
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0} with {1} hashes")
  @MethodSource("formatsAndHashes")
  void storesRemovalsAndClearsTrackTheEngine(String format, String hashes) throws Exception {
    engine = ScriptedEngine.start("--format", format, "--hash-repr", hashes);
    register();
    Chain a = chain(6);
    Chain b = chain(3);
    store(a, 0, 1);
    store(a, 1, 4);
    assertNodeMatches("a root block, then three chained blocks in one event");
    engine.publish(
        Map.of("op", "batch", "events", List.of(storeCommand(b, 0, 3), removeCommand(a.ids()[2]))));
    truth.store(null, b.ids(), b.tokens());
    truth.remove(a.ids()[2]);
    assertNodeMatches("one batch storing b and evicting a middle block of a");
    remove(Map.of("hash_repr", otherRepr(hashes)), b.ids()[1], 42L);
    assertNodeMatches(
        "b's second block removed by the same id in another representation, plus an unknown id");
    engine.publish(Map.of("op", "clear"));
    truth.clear();
    assertNodeMatches("all blocks cleared");
    store(a, 0, 2);
    assertNodeMatches("stored again after the clear");
  }

  @ParameterizedTest(name = "{0} replies, {1}")
  @CsvSource({
    "topic, vllm_map",
    "legacy, vllm_array",
    "legacy, sglang_array",
    "legacy, sglang_map",
    "topic, sglang_map"
  })
  void blocksStoredBeforeRegistrationAreReplayed(String layout, String format) throws Exception {
    engine = ScriptedEngine.start("--format", format, "--replay-layout", layout);
    Chain a = chain(4);
    Chain b = chain(2);
    store(a, 0, 2);
    store(b, 0, 2);
    store(a, 2, 4);
    remove(Map.of(), b.ids()[1]);
    register();
    assertNodeMatches("batches 0-3 published before the subscription, recovered by replay");
    JsonNode stats = listener();
    assertTrue(stats.get("replays").asLong() >= 1, "no replay: " + stats);
    assertEquals(0, stats.get("resets").asLong(), "the replay was complete: " + stats);
    assertTrue(engine.send(Map.of("op", "stats")).get("replays").asLong() >= 1);
  }

  @ParameterizedTest(name = "{0} replies, {1}, {2} hashes")
  @CsvSource({
    "topic, vllm_map, bin32",
    "legacy, sglang_array, negative_int",
    "legacy, vllm_array, int"
  })
  void aForwardGapIsRecoveredByReplay(String layout, String format, String hashes)
      throws Exception {
    engine =
        ScriptedEngine.start("--format", format, "--replay-layout", layout, "--hash-repr", hashes);
    register();
    Chain a = chain(3);
    Chain b = chain(2);
    store(a, 0, 1);
    assertNodeMatches("before the gap");
    long gapsBefore = listener().get("gaps").asLong();
    engine.send(Map.of("op", "drop_next"));
    long dropped = store(a, 1, 3);
    long next = store(b, 0, 2);
    assertEquals(dropped + 1, next);
    assertNodeMatches("batch " + dropped + " never published, recovered when " + next + " arrived");
    JsonNode stats = listener();
    assertEquals(gapsBefore + 1, stats.get("gaps").asLong(), "one gap: " + stats);
    assertEquals(0, stats.get("resets").asLong(), "the replay was complete: " + stats);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"vllm_map", "sglang_array"})
  void anEngineRestartDropsTheOldBlocks(String format) throws Exception {
    engine = ScriptedEngine.start("--format", format);
    register();
    Chain a = chain(3);
    Chain b = chain(2);
    store(a, 0, 3);
    store(b, 0, 1);
    assertNodeMatches("before the restart");
    engine.send(Map.of("op", "restart"));
    truth.clear();
    Chain c = chain(2);
    assertEquals(0, store(c, 0, 2), "a new engine process numbers from 0");
    assertNodeMatches("after the restart only the new process's blocks remain");
    assertTrue(listener().get("resets").asLong() >= 1);
  }

  // ---- helpers -------------------------------------------------------------------------------

  private static String otherRepr(String hashes) {
    return switch (hashes) {
      case "int" -> "negative_int";
      case "negative_int" -> "bin32";
      default -> "int";
    };
  }

  /** A fresh prompt of {@code blocks} blocks; ids alternate u64 above and below 2^63. */
  private Chain chain(int blocks) {
    int[] tokens = new int[blocks * BS];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = nextToken + rnd.nextInt(1000);
    }
    nextToken += 1000;
    long[] ids = new long[blocks];
    for (int i = 0; i < blocks; i++) {
      long r = rnd.nextLong();
      ids[i] = i % 2 == 0 ? r | Long.MIN_VALUE : r & Long.MAX_VALUE;
    }
    if (blocks > 2) {
      ids[blocks - 1] = 100 + rnd.nextInt(100); // a one-byte msgpack int
    }
    Chain c = new Chain(tokens, ids);
    probes.add(c);
    return c;
  }

  private static List<String> unsigned(long... ids) {
    return Arrays.stream(ids).mapToObj(Long::toUnsignedString).toList();
  }

  private static Map<String, Object> storeCommand(Chain c, int from, int to) {
    Map<String, Object> cmd = new HashMap<>();
    cmd.put("op", "store");
    cmd.put("parent", from == 0 ? null : Long.toUnsignedString(c.ids()[from - 1]));
    cmd.put("hashes", unsigned(Arrays.copyOfRange(c.ids(), from, to)));
    cmd.put("tokens", Arrays.copyOfRange(c.tokens(), from * BS, to * BS));
    cmd.put("block_size", BS);
    return cmd;
  }

  private static Map<String, Object> removeCommand(long... ids) {
    return Map.of("op", "remove", "hashes", unsigned(ids));
  }

  /** Stores blocks {@code [from, to)} of {@code c} on the engine and in the truth; returns the seq. */
  private long store(Chain c, int from, int to) throws Exception {
    long seq = engine.publish(storeCommand(c, from, to));
    truth.store(
        from == 0 ? null : c.ids()[from - 1],
        Arrays.copyOfRange(c.ids(), from, to),
        Arrays.copyOfRange(c.tokens(), from * BS, to * BS));
    return seq;
  }

  private void remove(Map<String, Object> options, long... ids) throws Exception {
    Map<String, Object> cmd = new HashMap<>(options);
    cmd.putAll(removeCommand(ids));
    engine.publish(cmd);
    truth.remove(ids);
  }

  private JsonNode call(String method, String path, Object body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
            .timeout(Duration.ofSeconds(10));
    if (body != null) {
      b.header("content-type", "application/json");
      b.method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    assertTrue(r.statusCode() < 300, path + " -> " + r.statusCode() + " " + r.body());
    return JSON.readTree(r.body());
  }

  /**
   * Registers the engine as worker 1 (one rank, with replay) and waits until the SUB gets
   * batches: no-op removals of an id nobody holds are published until one arrives (PUB/SUB slow
   * joiner; whatever was missed before it is recovered by replay).
   */
  private void register() throws Exception {
    Map<String, Object> w = new LinkedHashMap<>();
    w.put("worker_id", WORKER);
    w.put("endpoint", "http://127.0.0.1:1");
    w.put("block_size", BS);
    w.put("data_parallel_size", 1);
    w.put("kv_events_endpoints", Map.of("0", engine.pub));
    w.put("replay_endpoint", engine.replay);
    assertEquals("schedulable", call("POST", "/workers", w).get("lifecycle").asText());
    await("the node's SUB receives a batch from " + engine.pub)
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(25))
        .until(
            () -> {
              remove(Map.of(), 42L);
              JsonNode l = listener();
              return l != null && l.get("batches").asLong() > 0;
            });
  }

  private JsonNode listener() throws Exception {
    for (JsonNode w : call("GET", "/workers", null)) {
      if (w.get("worker_id").asLong() == WORKER) {
        return w.get("kv_events").get("0");
      }
    }
    throw new AssertionError("worker " + WORKER + " not listed");
  }

  private Map<String, Integer> nodeDepths() throws Exception {
    Map<String, Integer> out = new LinkedHashMap<>();
    for (int p = 0; p < probes.size(); p++) {
      JsonNode r = call("POST", "/overlap_scores", Map.of("token_ids", probes.get(p).tokens()));
      int depth = 0;
      for (JsonNode w : r.get("workers")) {
        if (w.get("worker_id").asLong() == WORKER && w.get("dp_rank").asInt() == 0) {
          depth = w.get("device_blocks").asInt();
        }
      }
      out.put("prompt " + p, depth);
    }
    return out;
  }

  /** Polls (bounded, 5 s) until the node's device blocks for every prompt equal the truth. */
  private void assertNodeMatches(String step) throws Exception {
    Map<String, Integer> expected = new LinkedHashMap<>();
    for (int p = 0; p < probes.size(); p++) {
      expected.put("prompt " + p, truth.depth(probes.get(p).tokens()));
    }
    java.util.concurrent.atomic.AtomicReference<Map<String, Integer>> actual =
        new java.util.concurrent.atomic.AtomicReference<>();
    try {
      await()
          .atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(25))
          .until(
              () -> {
                actual.set(nodeDepths());
                return actual.get().equals(expected);
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      assertEquals(expected, actual.get(), step + " (listener " + listener() + ")");
    }
  }
}
