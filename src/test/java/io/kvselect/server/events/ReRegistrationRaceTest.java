package io.kvselect.server.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.SelectionService;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Re-registering a worker with a new KV-event endpoint while a batch of the old endpoint is being
 * applied: the old listener's blocks must be gone afterwards and stay gone while the old engine
 * keeps publishing, and the new endpoint's blocks must arrive. The race is made deterministic by
 * an index that holds the ingest thread inside the old batch's store until the re-registration has
 * been answered.
 */
class ReRegistrationRaceTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int BS = 4;

  /** Holds the first store after {@link #arm} until {@link #release}; everything else passes. */
  static final class GatedIndex implements BlockIndex {
    private final BlockIndex inner;
    private final AtomicBoolean armed = new AtomicBoolean();
    final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    GatedIndex(BlockIndex inner) {
      this.inner = inner;
    }

    void arm() {
      armed.set(true);
    }

    void release() {
      released.countDown();
    }

    @Override
    public boolean store(WorkerRank rank, StorageTier tier, boolean hasParent, long parent, long[] ext,
        long[] local) {
      if (armed.compareAndSet(true, false)) {
        entered.countDown();
        try {
          released.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return inner.store(rank, tier, hasParent, parent, ext, local);
    }

    @Override
    public void remove(WorkerRank rank, StorageTier tier, long[] ext) {
      inner.remove(rank, tier, ext);
    }

    @Override
    public void clearWorker(long workerId) {
      inner.clearWorker(workerId);
    }

    @Override
    public void removeRank(WorkerRank rank) {
      inner.removeRank(rank);
    }

    @Override
    public OverlapScores findMatches(long[] localHashes) {
      return inner.findMatches(localHashes);
    }

    @Override
    public long size() {
      return inner.size();
    }

    @Override
    public List<StoredBlock> dump() {
      return inner.dump();
    }
  }

  private final HttpClient http = HttpClient.newHttpClient();
  private final GatedIndex gate = new GatedIndex(new ShardedBlockIndex(1, PrefixChainIndex::new));
  private KvselectNode node;
  private KvEventPublisher oldEngine;
  private KvEventPublisher newEngine;

  @AfterEach
  void stop() throws Exception {
    gate.release();
    for (KvEventPublisher p : new KvEventPublisher[] {oldEngine, newEngine}) {
      if (p != null) {
        p.close();
      }
    }
    if (node != null) {
      node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void aBatchInFlightFromTheOldEndpointDoesNotSurviveTheReRegistration() throws Exception {
    NodeSettings s = NodeSettings.parse(
        new String[] {"--host", "127.0.0.1", "--port", "0", "--threads", "1"}, Map.of());
    SelectionService service = SelectionService.builder().indexFactory(() -> gate).build();
    node = KvselectNode.start(s, service, 1).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    oldEngine = engine("old-engine");
    newEngine = engine("new-engine");
    String oldEndpoint = endpoint(oldEngine);
    String newEndpoint = endpoint(newEngine);
    int[] before = tokens(100, 8);
    int[] inFlight = tokens(200, 8);
    int[] later = tokens(300, 8);
    int[] fresh = tokens(400, 8);

    register(oldEndpoint);
    awaitListening(oldEngine);
    oldEngine.publish(0, batch(stored(before)));
    await().atMost(Duration.ofSeconds(10)).until(() -> depth(before) == 2);

    gate.arm();
    oldEngine.publish(0, batch(stored(inFlight)));
    assertTrue(gate.entered.await(10, TimeUnit.SECONDS), "the ingest thread reached the old batch's store");
    register(newEndpoint);
    gate.release();

    await("the old endpoint's blocks are gone and stay gone while it keeps publishing")
        .atMost(Duration.ofSeconds(10)).during(Duration.ofMillis(600)).pollInterval(Duration.ofMillis(50))
        .until(() -> {
          oldEngine.publish(0, batch(stored(inFlight), stored(later)));
          return depth(before) == 0 && depth(inFlight) == 0 && depth(later) == 0;
        });
    await("the new endpoint's blocks arrive").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(25))
        .until(() -> {
          newEngine.publish(0, batch(stored(fresh)));
          return depth(fresh) == 2;
        });
    assertEquals(0, depth(inFlight));
    assertEquals(0, depth(later));
  }

  private static KvEventPublisher engine(String name) {
    return new KvEventPublisher(name, "127.0.0.1", new int[1], null, "", ReplayLayout.TOPIC);
  }

  private static String endpoint(KvEventPublisher p) throws Exception {
    return p.ready().get(10, TimeUnit.SECONDS).publishers().get(0);
  }

  private void register(String kvEndpoint) throws Exception {
    HttpResponse<String> r = send("POST", "/workers", Map.of("worker_id", 1, "endpoint", "http://127.0.0.1:1",
        "block_size", BS, "kv_events_endpoint", kvEndpoint));
    assertEquals(201, r.statusCode(), r.body());
  }

  /** Publishes throw-away removals until the worker's listener has received one. */
  private void awaitListening(KvEventPublisher engine) {
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(25)).until(() -> {
      engine.publish(0, batch(new BlockRemoved(new long[] {42}, "GPU", null, null)));
      JsonNode l = JSON.readTree(send("GET", "/workers", null).body()).get(0).get("kv_events").get("0");
      return l != null && l.get("batches").asLong() > 0;
    });
  }

  private int depth(int[] prompt) throws Exception {
    JsonNode r = JSON.readTree(send("POST", "/overlap_scores", Map.of("token_ids", prompt)).body());
    for (JsonNode w : r.get("workers")) {
      if (w.get("worker_id").asLong() == 1) {
        return w.get("device_blocks").asInt();
      }
    }
    return 0;
  }

  private static int[] tokens(int from, int count) {
    int[] t = new int[count];
    for (int i = 0; i < count; i++) {
      t[i] = from + i;
    }
    return t;
  }

  private static BlockStored stored(int[] tokens) {
    long[] chain = BlockHasher.sequenceHashes(BlockHasher.localBlockHashes(tokens, tokens.length, BS,
        BlockHasher.saltSeed(null, null), false, null));
    return new BlockStored(chain, false, 0, Arrays.copyOf(tokens, chain.length * BS), BS, "GPU", null, null, null,
        null, null, null);
  }

  private static byte[] batch(KvEvent... events) {
    return KvEventEncoder.encode(new KvEventBatch(1.0, List.of(events), 0), WireFormat.MAP);
  }

  private HttpResponse<String> send(String method, String path, Object body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path));
    if (body != null) {
      b.header("content-type", "application/json");
      b.method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
