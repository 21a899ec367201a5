package io.kvselect.server.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.tools.mock.KvEventEncoder;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import io.kvselect.tools.mock.WireFormat;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A real node subscribed to real publishers on 127.0.0.1: after each scenario, what
 * {@code /overlap_scores} reports equals what the publisher currently holds.
 */
class EventsEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int BS = 4;

  /** Bound of every wait for the node to reflect what was published. */
  private static final Duration WAIT = Duration.ofSeconds(10);

  private static final Duration POLL = Duration.ofMillis(25);
  private final HttpClient http = HttpClient.newHttpClient();
  private KvselectNode node;
  private KvEventPublisher pub;

  @BeforeEach
  void start() throws Exception {
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
    if (pub != null) {
      pub.close();
    }
    node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  private KvEventPublisher.Endpoints publisher(int ranks, boolean replay, ReplayLayout layout)
      throws Exception {
    pub =
        new KvEventPublisher(
            "test-pub", "127.0.0.1", new int[ranks], replay ? 0 : null, "", layout);
    return pub.ready().get(10, TimeUnit.SECONDS);
  }

  private JsonNode call(String method, String path, Object body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path));
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

  private void register(long id, KvEventPublisher.Endpoints ep, int ranks) throws Exception {
    Map<String, Object> w = new LinkedHashMap<>();
    w.put("worker_id", id);
    w.put("endpoint", "http://127.0.0.1:1");
    w.put("block_size", BS);
    w.put("data_parallel_size", ranks);
    Map<String, String> eps = new LinkedHashMap<>();
    for (int r = 0; r < ranks; r++) {
      eps.put(Integer.toString(r), ep.publishers().get(r));
    }
    w.put("kv_events_endpoints", eps);
    if (ep.replay() != null) {
      w.put("replay_endpoint", ep.replay());
    }
    assertEquals("schedulable", call("POST", "/workers", w).get("lifecycle").asText());
  }

  private static int[] tokens(int from, int count) {
    int[] t = new int[count];
    for (int i = 0; i < count; i++) {
      t[i] = from + i;
    }
    return t;
  }

  private static long[] chain(int[] tokens) {
    return BlockHasher.sequenceHashes(
        BlockHasher.localBlockHashes(
            tokens, tokens.length, BS, BlockHasher.saltSeed(null, null), false, null));
  }

  /** A vLLM BlockStored of tokens[from*BS .. to*BS) extending block from-1 (engine hashes = chain). */
  private static BlockStored stored(int[] tokens, int fromBlock, int toBlock) {
    long[] c = chain(tokens);
    return new BlockStored(
        Arrays.copyOfRange(c, fromBlock, toBlock),
        fromBlock > 0,
        fromBlock > 0 ? c[fromBlock - 1] : 0,
        Arrays.copyOfRange(tokens, fromBlock * BS, toBlock * BS),
        BS,
        "GPU",
        null,
        null,
        null,
        null,
        null,
        null);
  }

  private void publish(int rank, WireFormat wire, KvEvent... events) {
    pub.publish(rank, KvEventEncoder.encode(new KvEventBatch(1.0, List.of(events), rank), wire));
  }

  /** Device depth per (worker, rank) that /overlap_scores reports for a prompt. */
  private Map<String, Integer> depths(int[] prompt) throws Exception {
    JsonNode r = call("POST", "/overlap_scores", Map.of("token_ids", prompt));
    Map<String, Integer> out = new LinkedHashMap<>();
    for (JsonNode w : r.get("workers")) {
      out.put(
          w.get("worker_id").asLong() + ":" + w.get("dp_rank").asInt(),
          w.get("device_blocks").asInt());
    }
    return out;
  }

  private void awaitDepths(int[] prompt, Predicate<Map<String, Integer>> done, String what) {
    AtomicReference<Map<String, Integer>> last = new AtomicReference<>();
    try {
      await()
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(
              () -> {
                last.set(depths(prompt));
                return done.test(last.get());
              });
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(what + ": last overlap " + last.get(), e);
    }
  }

  private JsonNode listener(long worker, int rank) throws Exception {
    for (JsonNode w : call("GET", "/workers", null)) {
      if (w.get("worker_id").asLong() == worker) {
        return w.get("kv_events").get(Integer.toString(rank));
      }
    }
    throw new AssertionError("worker " + worker + " not listed");
  }

  /** Publishes a throw-away batch until the subscription is connected (PUB/SUB slow joiner). */
  private void awaitConnected(int rank, WireFormat wire, long worker) {
    await("listener of " + worker + ":" + rank + " receives a batch")
        .atMost(WAIT)
        .pollInterval(POLL)
        .until(
            () -> {
              publish(rank, wire, new BlockRemoved(new long[] {42}, "GPU", null, null));
              JsonNode l = listener(worker, rank);
              return l != null && l.get("batches").asLong() > 0;
            });
  }

  @ParameterizedTest
  @EnumSource(WireFormat.class)
  void storedRemovedAndClearedBlocksTrackThePublisher(WireFormat wire) throws Exception {
    register(1, publisher(1, true, ReplayLayout.TOPIC), 1);
    awaitConnected(0, wire, 1);
    int[] prompt = tokens(100, 16);
    publish(0, wire, stored(prompt, 0, 2));
    publish(0, wire, stored(prompt, 2, 4));
    awaitDepths(prompt, d -> d.get("1:0") == 4, "4 stored blocks");
    JsonNode dump = call("GET", "/dump", null).get("default:default");
    assertEquals(4, dump.get("events").size());
    assertEquals(
        listener(1, 0).get("last_seq").asLong(),
        dump.get("watermarks").get("1:0").asLong(),
        "the dump says up to which sequence number it is complete");
    publish(0, wire, new BlockRemoved(new long[] {chain(prompt)[2]}, "GPU", null, null));
    awaitDepths(prompt, d -> d.get("1:0") == 2, "block 2 evicted");
    publish(0, wire, new AllBlocksCleared());
    awaitDepths(prompt, d -> d.get("1:0") == 0, "all cleared");
  }

  @ParameterizedTest
  @EnumSource(ReplayLayout.class)
  void batchesSentBeforeTheSubscriberJoinedAreReplayed(ReplayLayout layout) throws Exception {
    KvEventPublisher.Endpoints ep = publisher(1, true, layout);
    int[] prompt = tokens(7, 12);
    publish(0, WireFormat.MAP, stored(prompt, 0, 1));
    publish(0, WireFormat.MAP, stored(prompt, 1, 2));
    await("both batches published")
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> pub.lastSeq(0) >= 1);
    register(1, ep, 1);
    await("block 2 applied live")
        .atMost(WAIT)
        .pollInterval(POLL)
        .until(
            () -> {
              publish(0, WireFormat.MAP, stored(prompt, 2, 3));
              return depths(prompt).get("1:0") >= 3;
            });
    awaitDepths(prompt, d -> d.get("1:0") == 3, "blocks 0-1 recovered by replay, block 2 live");
    assertTrue(listener(1, 0).get("replays").asLong() >= 1);
  }

  @Test
  void aRestartedPublisherDropsTheRanksBlocks() throws Exception {
    register(1, publisher(1, true, ReplayLayout.TOPIC), 1);
    awaitConnected(0, WireFormat.MAP, 1);
    int[] before = tokens(1, 8);
    publish(0, WireFormat.MAP, stored(before, 0, 2));
    awaitDepths(before, d -> d.get("1:0") == 2, "stored before restart");
    pub.restart();
    int[] after = tokens(500, 8);
    publish(0, WireFormat.MAP, stored(after, 0, 2));
    awaitDepths(after, d -> d.get("1:0") == 2, "stored after restart");
    assertEquals(0, depths(before).get("1:0"), "blocks from before the restart are gone");
    assertTrue(listener(1, 0).get("resets").asLong() >= 1);
  }

  @Test
  void reRegistrationKeepsOrResetsStateAndDeleteStopsTheListener() throws Exception {
    KvEventPublisher.Endpoints ep = publisher(1, false, ReplayLayout.TOPIC);
    register(1, ep, 1);
    awaitConnected(0, WireFormat.MAP, 1);
    int[] prompt = tokens(40, 8);
    publish(0, WireFormat.MAP, stored(prompt, 0, 2));
    awaitDepths(prompt, d -> d.get("1:0") == 2, "stored");
    register(1, ep, 1);
    assertEquals(2, depths(prompt).get("1:0"), "an unchanged registration keeps the blocks");
    call("DELETE", "/workers/1", null);
    assertEquals(
        0, node.service().inspection().indexSize(), "DELETE answers after the blocks are gone");
    register(1, ep, 1);
    assertEquals(0, depths(prompt).get("1:0"));
    awaitConnected(0, WireFormat.MAP, 1);
    publish(0, WireFormat.MAP, stored(prompt, 0, 1));
    awaitDepths(prompt, d -> d.get("1:0") == 1, "a fresh listener after re-registration");
  }

  @Test
  void twoRanksOfOneWorkerAndMalformedFrames() throws Exception {
    register(3, publisher(2, false, ReplayLayout.TOPIC), 2);
    awaitConnected(1, WireFormat.ARRAY, 3);
    int[] prompt = tokens(9, 8);
    publish(1, WireFormat.ARRAY, stored(prompt, 0, 2));
    awaitDepths(prompt, d -> d.get("3:1") == 2 && d.get("3:0") == 0, "rank 1 only");
    pub.publish(1, new byte[] {(byte) 0xc1, 1, 2});
    publish(
        1, WireFormat.ARRAY, new BlockRemoved(new long[] {chain(prompt)[1]}, "GPU", null, null));
    awaitDepths(prompt, d -> d.get("3:1") == 1, "later batches still apply");
    assertEquals(1, listener(3, 1).get("malformed_payloads").asLong());
  }

  @Test
  void badFramesAreCountedAndDropped() throws Exception {
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket raw = ctx.createSocket(SocketType.PUB);
      int port = raw.bindToRandomPort("tcp://127.0.0.1");
      String ep = "tcp://127.0.0.1:" + port;
      call(
          "POST",
          "/workers",
          Map.of(
              "worker_id", 5, "endpoint", "http://x", "block_size", BS, "kv_events_endpoint", ep));
      int[] prompt = tokens(3, 4);
      byte[] good =
          KvEventEncoder.encode(
              new KvEventBatch(1.0, List.of(stored(prompt, 0, 1)), 0), WireFormat.MAP);
      java.util.concurrent.atomic.AtomicLong seq = new java.util.concurrent.atomic.AtomicLong();
      await("the good batch applied between bad frames")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(
              () -> {
                raw.sendMore("");
                raw.send(new byte[7]);
                raw.send("only-two-frames");
                raw.sendMore("");
                raw.sendMore(
                    java.nio.ByteBuffer.allocate(8).putLong(seq.getAndIncrement()).array());
                raw.send(good);
                return depths(prompt).get("5:0") > 0;
              });
      assertEquals(1, depths(prompt).get("5:0"));
      assertTrue(listener(5, 0).get("dropped_frames").asLong() >= 1);
    }
  }
}
