package io.kvselect.tools.mock;

import static io.kvselect.tools.mock.MockClient.generate;
import static io.kvselect.tools.mock.MockClient.longs;
import static io.kvselect.tools.mock.MockClient.post;
import static io.kvselect.tools.mock.MockClient.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.core.hash.BlockHasher;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A mock engine over real sockets on 127.0.0.1: HTTP in, ZMQ PUB frames out, decoded with msgpack-core. */
class MockEngineSocketTest {

  static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  static long[] chain(int[] tokens, int bs) {
    return BlockHasher.sequenceHashes(
        BlockHasher.localBlockHashes(
            tokens, tokens.length, bs, BlockHasher.CHAIN_SEED, false, null));
  }

  static Map<String, Object> req(int[] tokens) {
    return Map.of("token_ids", tokens, "output_tokens", 2);
  }

  @Test
  void mapFormStoresChainTheirParentAcrossRequests() throws Exception {
    try (MockFleet fleet = MockFleet.start(MockerOptions.local(1, 1, 64, 4, WireFormat.MAP));
        MockClient.Sub sub = MockClient.Sub.ready(fleet.engines().get(0), 0)) {
      EngineInfo e = fleet.engines().get(0);
      int[] first = tokens(1, 10);
      JsonNode r1 = generate(e, req(first));
      assertEquals(0, r1.get("cached_tokens").asInt());
      assertEquals(10, r1.get("uncached_tokens").asInt());
      assertEquals(0, r1.get("dp_rank").asInt());
      MockClient.Frames f1 = sub.next();
      assertEquals("", f1.topic());
      List<Object> env = f1.envelope();
      assertEquals(3, env.size());
      assertInstanceOf(Double.class, env.get(0));
      assertEquals(0L, env.get(2));
      @SuppressWarnings("unchecked")
      Map<Object, Object> s1 = (Map<Object, Object>) f1.events().get(0);
      assertEquals(
          List.of(
              "type",
              "block_hashes",
              "parent_block_hash",
              "token_ids",
              "block_size",
              "lora_id",
              "medium",
              "lora_name",
              "extra_keys",
              "group_idx",
              "kv_cache_spec_kind"),
          List.copyOf(s1.keySet()));
      assertEquals("BlockStored", s1.get("type"));
      long[] c1 = chain(first, 4);
      assertEquals(longs(c1), s1.get("block_hashes"));
      assertNull(s1.get("parent_block_hash"));
      assertEquals(longs(tokens(1, 8)), s1.get("token_ids"));
      assertEquals(4L, s1.get("block_size"));
      assertEquals("GPU", s1.get("medium"));
      assertEquals(Arrays.asList(null, null), s1.get("extra_keys"));
      assertEquals(0L, s1.get("group_idx"));
      assertEquals("full_attention", s1.get("kv_cache_spec_kind"));

      int[] longer = tokens(1, 17);
      JsonNode r2 = generate(e, req(longer));
      assertEquals(8, r2.get("cached_tokens").asInt());
      assertEquals(9, r2.get("uncached_tokens").asInt());
      MockClient.Frames f2 = sub.next();
      assertEquals(f1.seq() + 1, f2.seq());
      @SuppressWarnings("unchecked")
      Map<Object, Object> s2 = (Map<Object, Object>) f2.events().get(0);
      long[] c2 = chain(longer, 4);
      assertEquals(longs(c2[2], c2[3]), s2.get("block_hashes"));
      assertEquals(c1[1], s2.get("parent_block_hash"));
      assertEquals(longs(tokens(9, 8)), s2.get("token_ids"));
      assertEquals(4, state(e).get("ranks").get(0).get("cached_blocks").asInt());
    }
  }

  @Test
  void arrayFormIsTheNineElementBlockStoredWithExtraKeys() throws Exception {
    try (MockFleet fleet = MockFleet.start(MockerOptions.local(1, 1, 64, 4, WireFormat.ARRAY));
        MockClient.Sub sub = MockClient.Sub.ready(fleet.engines().get(0), 0)) {
      EngineInfo e = fleet.engines().get(0);
      int[] first = tokens(7, 8);
      generate(e, req(first));
      List<?> s1 = (List<?>) sub.next().events().get(0);
      assertEquals(9, s1.size());
      assertEquals(
          Arrays.asList(
              "BlockStored",
              longs(chain(first, 4)),
              null,
              longs(first),
              4L,
              null,
              "GPU",
              null,
              Arrays.asList(null, null)),
          s1);

      int[] salted = tokens(7, 12);
      generate(e, Map.of("token_ids", salted, "lora_name", "ad", "cache_salt", "t1"));
      List<?> s2 = (List<?>) sub.next().events().get(0);
      long seed = BlockHasher.saltSeed("ad", "t1");
      long[] c =
          BlockHasher.sequenceHashes(
              BlockHasher.localBlockHashes(salted, 12, 4, seed, false, null));
      assertEquals(longs(c), s2.get(1), "salted chains are new blocks from the root");
      assertNull(s2.get(2));
      assertEquals("ad", s2.get(7));
      assertEquals(List.of(List.of("ad", "t1"), List.of("ad"), List.of("ad")), s2.get(8));
    }
  }

  @Test
  void fullCacheEvictsLeastRecentBlocksAsBlockRemoved() throws Exception {
    try (MockFleet fleet = MockFleet.start(MockerOptions.local(1, 1, 4, 2, WireFormat.MAP));
        MockClient.Sub sub = MockClient.Sub.ready(fleet.engines().get(0), 0)) {
      EngineInfo e = fleet.engines().get(0);
      int[] a = tokens(100, 4);
      int[] b = tokens(200, 4);
      int[] c = tokens(300, 4);
      generate(e, req(a));
      generate(e, req(b));
      sub.next();
      sub.next();
      generate(e, req(c));
      List<Object> events = sub.next().events();
      assertEquals(3, events.size());
      long[] ca = chain(a, 2);
      assertEquals(
          Map.of(
              "type",
              "BlockRemoved",
              "block_hashes",
              longs(ca[1]),
              "medium",
              "GPU",
              "group_idx",
              0L),
          events.get(0),
          "the tail of the least recent chain goes first");
      assertEquals(longs(ca[0]), ((Map<?, ?>) events.get(1)).get("block_hashes"));
      assertEquals(longs(chain(c, 2)), ((Map<?, ?>) events.get(2)).get("block_hashes"));
      assertEquals(4, state(e).get("ranks").get(0).get("cached_blocks").asInt());
      assertEquals(0, generate(e, req(a)).get("cached_tokens").asInt());
    }
  }

  @Test
  void restartStartsSequenceNumbersAgainWithoutAllBlocksCleared() throws Exception {
    try (MockFleet fleet = MockFleet.start(MockerOptions.local(1, 1, 64, 4, WireFormat.MAP));
        MockClient.Sub sub = MockClient.Sub.ready(fleet.engines().get(0), 0)) {
      EngineInfo e = fleet.engines().get(0);
      generate(e, req(tokens(0, 8)));
      long before = sub.next().seq();
      assertTrue(before > 0, "the readiness probes used sequence numbers");
      assertEquals(200, post(e, "/restart", null).status());
      MockClient.awaitLastSeq(e, 0, null);
      assertEquals(0, state(e).get("ranks").get(0).get("cached_blocks").asInt());
      JsonNode again = generate(e, req(tokens(0, 8)));
      assertEquals(0, again.get("cached_tokens").asInt(), "the cache was lost");
      MockClient.Frames f = sub.next();
      assertEquals(0, f.seq());
      assertEquals("BlockStored", ((Map<?, ?>) f.events().get(0)).get("type"));
      post(e, "/clear", null);
      MockClient.Frames cleared = sub.next();
      assertEquals(1, cleared.seq());
      assertEquals(List.of(Map.of("type", "AllBlocksCleared")), cleared.events());
      MockClient.awaitLastSeq(e, 0, 1L);
    }
  }

  @Test
  void dataParallelRanksPublishOnTheirOwnSocketsWithTheirRank() throws Exception {
    try (MockFleet fleet = MockFleet.start(MockerOptions.local(2, 2, 64, 4, WireFormat.ARRAY))) {
      EngineInfo e = fleet.engines().get(1);
      assertEquals(2, e.workerId());
      assertNull(e.replayEndpoint(), "vLLM replays only with one DP rank");
      assertEquals(List.of(0, 1), List.copyOf(e.kvEventsEndpoints().keySet()));
      assertNotEquals(e.kvEventsEndpoint(0), e.kvEventsEndpoint(1));
      try (MockClient.Sub rank1 = MockClient.Sub.ready(e, 1)) {
        JsonNode r = generate(e, Map.of("token_ids", tokens(0, 8), "dp_rank", 1));
        assertEquals(1, r.get("dp_rank").asInt());
        MockClient.Frames f = rank1.next();
        assertEquals(1L, f.envelope().get(2));
        JsonNode ranks = state(e).get("ranks");
        assertEquals(0, ranks.get(0).get("cached_blocks").asInt());
        assertEquals(2, ranks.get(1).get("cached_blocks").asInt());
        assertEquals(
            1,
            generate(e, Map.of("token_ids", tokens(0, 8))).get("dp_rank").asInt(),
            "an unpinned request follows its cached prefix");
      }
    }
  }

  @Test
  void closingTheFleetStopsEveryZmqThread() throws Exception {
    MockFleet fleet = MockFleet.start(MockerOptions.local(3, 2, 8, 4, WireFormat.MAP));
    assertEquals(3, zmqThreads());
    fleet.close();
    assertEquals(0, zmqThreads());
  }

  private static long zmqThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith("kvselect-mock-zmq-"))
        .count();
  }

  @Test
  void badRequestsAre400WithTheFieldNamed() throws Exception {
    try (MockFleet fleet = MockFleet.start(MockerOptions.local(1, 1, 4, 4, WireFormat.MAP))) {
      EngineInfo e = fleet.engines().get(0);
      assertError(e, Map.of("output_tokens", 1), "token_ids");
      assertError(e, Map.of("token_ids", List.of(1, -2)), "token_ids[1]");
      assertError(e, Map.of("token_ids", List.of(1, 2), "dp_rank", 3), "dp_rank");
      assertError(e, Map.of("token_ids", List.of(1, 2), "output_tokens", "x"), "output_tokens");
      assertError(e, Map.of("token_ids", tokens(0, 20)), "num_gpu_blocks");
      assertError(e, "{not json", "");
      assertEquals(0, state(e).get("ranks").get(0).get("cached_blocks").asInt());
    }
  }

  /**
   * The modelled prefill and decode are waited out on timers, in order: the prompt's blocks are
   * published once the prefill is over, while the response still waits out the decode (1 s
   * modelled, at speed 1), during which the engine keeps answering. Checked by the order of
   * observable events, never by elapsed time.
   */
  @Test
  void prefillAndDecodeWaitOnTimersWithoutBlockingTheEngine() throws Exception {
    MockerOptions o =
        MockerOptions.local(1, 1, 64, 4, WireFormat.MAP)
            .withTiming(new TimingModel(1_000, 100_000, 1));
    try (MockFleet fleet = MockFleet.start(o);
        MockClient.Sub sub = MockClient.Sub.ready(fleet.engines().get(0), 0)) {
      EngineInfo e = fleet.engines().get(0);
      int[] prompt = tokens(0, 200);
      var slow =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> {
                try {
                  return generate(e, Map.of("token_ids", prompt, "output_tokens", 10));
                } catch (Exception ex) {
                  throw new IllegalStateException(ex);
                }
              });
      MockClient.Frames stored = sub.next();
      boolean pendingWhenPublished = !slow.isDone();
      JsonNode during = state(e);
      boolean pendingAfterState = !slow.isDone();
      JsonNode r = slow.get(10, java.util.concurrent.TimeUnit.SECONDS);

      @SuppressWarnings("unchecked")
      Map<Object, Object> event = (Map<Object, Object>) stored.events().get(0);
      assertEquals("BlockStored", event.get("type"));
      assertEquals(
          longs(chain(prompt, 4)),
          event.get("block_hashes"),
          "the prompt's 50 blocks, after its prefill");
      assertTrue(
          pendingWhenPublished, "the response waits out the decode after the blocks are published");
      assertTrue(
          pendingAfterState, "GET /state answered while the request was waiting out its decode");
      assertEquals(
          50,
          during.get("ranks").get(0).get("cached_blocks").asInt(),
          "the state seen during the decode");
      assertEquals(200.0, r.get("prefill_ms").asDouble(), 1e-9);
      assertEquals(1000.0, r.get("decode_ms").asDouble(), 1e-9);
      assertEquals(200, r.get("uncached_tokens").asInt());
      assertNull(sub.recv(200), "one batch per request");
    }
  }

  private static void assertError(EngineInfo e, Object body, String field) throws Exception {
    MockClient.Reply r = post(e, "/generate", body);
    assertEquals(400, r.status(), String.valueOf(r.body()));
    assertTrue(r.body().get("error").asText().contains(field), r.body().toString());
  }
}
