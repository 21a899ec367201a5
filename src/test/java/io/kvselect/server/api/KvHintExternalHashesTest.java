package io.kvselect.server.api;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.tools.mock.KvEventEncoder;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import io.kvselect.tools.mock.WireFormat;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A {@code kv_hint} names the blocks by the hashes the source engine published for them, not by
 * the router's own sequence hashes: here the engine publishes arbitrary u64 block hashes (two of
 * them above {@code 2^63}) unrelated to the router's chain, as vLLM and SGLang do, while its
 * {@code token_ids} match the prompt. A real node subscribes to a real publisher on 127.0.0.1.
 */
class KvHintExternalHashesTest {

  private static final int BS = 4;
  private static final Duration WAIT = Duration.ofSeconds(20);

  /** The holder engine's own hashes for the prompt's first three blocks. */
  private static final long[] ENGINE = {0xF00DCAFE12345678L, 0x8000000000000000L, 424242L};

  private KvEventPublisher pub;
  private String pubEndpoint;

  @BeforeEach
  void startPublisher() throws Exception {
    pub =
        new KvEventPublisher(
            "hint-source-engine", "127.0.0.1", new int[1], null, "", ReplayLayout.TOPIC);
    pubEndpoint = pub.ready().get(10, TimeUnit.SECONDS).publishers().get(0);
  }

  @AfterEach
  void stopPublisher() {
    pub.close();
  }

  private static int[] tokens(int count) {
    int[] t = new int[count];
    for (int i = 0; i < count; i++) {
      t[i] = 100 + i;
    }
    return t;
  }

  private static String tokenJson(int[] tokens) {
    return "\"token_ids\":" + Arrays.toString(tokens).replace(" ", "");
  }

  /** Registers hint-type workers 1 (the holder, fed by the publisher) and 2 (no cache). */
  private void register(NodeHarness n) throws Exception {
    assertEquals(
        201,
        n.worker(
                1,
                "kv_events_endpoint",
                pubEndpoint,
                "router_hint_worker_type",
                "decode",
                "router_hint_source_control_endpoints",
                Map.of("0", "tcp://worker-1:5600"))
            .status());
    assertEquals(
        201,
        n.worker(
                2,
                "router_hint_worker_type",
                "decode",
                "router_hint_source_control_endpoints",
                Map.of("0", "tcp://worker-2:5600"))
            .status());
  }

  /** Device blocks of worker 1 rank 0 for {@code prompt}, as {@code /overlap_scores} reports them. */
  private static int holderDepth(NodeHarness n, int[] prompt) throws Exception {
    NodeHarness.Reply r = n.post("/overlap_scores", "{" + tokenJson(prompt) + "}");
    assertEquals(200, r.status(), r.raw());
    for (JsonNode w : r.body().get("workers")) {
      if (w.get("worker_id").asLong() == 1 && w.get("dp_rank").asInt() == 0) {
        return w.get("device_blocks").asInt();
      }
    }
    return 0;
  }

  /**
   * Publishes the engine's store of the prompt's first three blocks until the node has indexed it
   * (a SUB joins a PUB asynchronously; a repeated store is idempotent).
   */
  private void publishHolderBlocks(NodeHarness n, int[] prompt) {
    BlockStored stored =
        new BlockStored(
            ENGINE,
            false,
            0,
            Arrays.copyOf(prompt, 3 * BS),
            BS,
            "GPU",
            null,
            null,
            null,
            null,
            null,
            null);
    byte[] batch = KvEventEncoder.encode(new KvEventBatch(1.0, List.of(stored), 0), WireFormat.MAP);
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              pub.publish(0, batch);
              return holderDepth(n, prompt) == 3;
            });
  }

  private static List<BigInteger> unsigned(long[] values) {
    List<BigInteger> out = new ArrayList<>();
    for (long v : values) {
      out.add(new BigInteger(Long.toUnsignedString(v)));
    }
    return out;
  }

  @Test
  void hintBlockHashesAreTheSourceEnginesPublishedHashesAsUnsignedNumbers() throws Exception {
    try (NodeHarness n = new NodeHarness(Map.of())) {
      register(n);
      int[] prompt = tokens(5 * BS);
      publishHolderBlocks(n, prompt);

      NodeHarness.Reply r =
          n.post(
              "/select_and_reserve",
              "{\"selection_id\":\"h-1\","
                  + "\"pinned_worker\":{\"worker_id\":2,\"dp_rank\":0},"
                  + tokenJson(prompt)
                  + "}");
      assertEquals(200, r.status(), r.raw());
      JsonNode hint = r.body().get("kv_hint");
      assertNotNull(hint, r.raw());
      assertEquals("0.1", hint.get("protocol_version").asText());
      assertEquals("h-1", hint.get("message_id").asText());
      JsonNode action = hint.get("actions").get(0);
      assertEquals("kv.fetch", action.get("action_type").asText());
      assertEquals("1.0", action.get("action_version").asText());
      JsonNode payload = action.get("payload");
      assertEquals("tcp://worker-1:5600", payload.get("source_control_endpoint").asText());
      JsonNode hashes = payload.get("block_hashes");
      List<BigInteger> got = new ArrayList<>();
      for (JsonNode h : hashes) {
        assertTrue(h.isIntegralNumber(), "a JSON integer, not a string: " + r.raw());
        got.add(h.bigIntegerValue());
      }
      assertEquals(
          unsigned(ENGINE), got, "entry i = the engine's hash of request block i: " + r.raw());
      for (BigInteger h : got) {
        assertTrue(h.signum() >= 0 && h.bitLength() <= 64, "0 <= h < 2^64: " + h);
      }
      assertNotEquals(
          r.body().get("sequence_hashes").get(0),
          hashes.get(0),
          "the router's own hash of block 0 differs from the engine's");
      NodeHarness.Reply query =
          n.post(
              "/select",
              "{\"pinned_worker\":{\"worker_id\":2,\"dp_rank\":0}," + tokenJson(prompt) + "}");
      assertEquals(200, query.status(), query.raw());
      assertNull(query.body().get("kv_hint"), "a query-only select carries no hint");
    }
  }

  @Test
  void noHintWhenTheLongerPrefixIsOnlyPredicted() throws Exception {
    try (NodeHarness n = new NodeHarness(Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "60"))) {
      register(n);
      int[] prompt = tokens(2 * BS);
      NodeHarness.Reply a =
          n.post(
              "/select_and_reserve",
              "{\"selection_id\":\"p-1\","
                  + "\"pinned_worker\":{\"worker_id\":1,\"dp_rank\":0},"
                  + tokenJson(prompt)
                  + "}");
      assertEquals(200, a.status(), a.raw());
      NodeHarness.Reply b =
          n.post(
              "/select_and_reserve",
              "{\"selection_id\":\"p-2\","
                  + "\"pinned_worker\":{\"worker_id\":2,\"dp_rank\":0},"
                  + tokenJson(prompt)
                  + "}");
      assertEquals(200, b.status(), b.raw());
      NodeHarness.Reply predicted =
          n.post(
              "/select",
              "{\"pinned_worker\":{\"worker_id\":1,\"dp_rank\":0}," + tokenJson(prompt) + "}");
      assertEquals(
          2 * BS,
          predicted.body().get("overlap").get("gpu").asLong(),
          "worker 1's prefix is known from its booking: " + predicted.raw());
      assertNull(
          b.body().get("kv_hint"),
          "worker 1 published no block, so it has no hash to name: " + b.raw());
    }
  }
}
