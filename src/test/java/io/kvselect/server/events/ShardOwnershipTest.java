package io.kvselect.server.events;

import static io.kvselect.server.events.EventNode.batch;
import static io.kvselect.server.events.EventNode.stored;
import static io.kvselect.server.events.EventNode.tokens;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.SelectionService;
import io.kvselect.testing.ForwardingBlockIndex;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every index shard is written by KV-event ingestion from one place only, the indexing-shard
 * verticle of the poller that owns it ({@code shard mod pollers}), whatever the writes are: live
 * batches, a batch stamped with another DP rank of the worker, an {@code AllBlocksCleared} that
 * clears the worker's other ranks, a publisher restart, a re-registration with a new endpoint, a
 * deleted worker; the pollers themselves only decode. A node with two pollers over a four-shard
 * index, whose shards record the Vert.x context (or, outside one, the thread) that writes them;
 * writes made by the catalog itself (the HTTP event loop) are not ingestion and are left out.
 */
class ShardOwnershipTest {

  private static final int SHARDS = 4;
  private static final int POLLERS = 2;
  private static final int WORKERS = 6;

  /** One shard of the index, recording which threads write it. */
  static final class RecordingShard extends ForwardingBlockIndex {
    final Set<String> writers = ConcurrentHashMap.newKeySet();

    RecordingShard() {
      super(new PrefixChainIndex());
    }

    private void wrote() {
      io.vertx.core.Context c = io.vertx.core.Vertx.currentContext();
      writers.add(
          c != null && c.isWorkerContext()
              ? "deployment:" + c.deploymentID()
              : Thread.currentThread().getName());
    }

    @Override
    public boolean store(
        WorkerRank rank,
        StorageTier tier,
        boolean hasParent,
        long parent,
        long[] ext,
        long[] local) {
      wrote();
      return inner.store(rank, tier, hasParent, parent, ext, local);
    }

    @Override
    public void remove(WorkerRank rank, StorageTier tier, long[] ext) {
      wrote();
      inner.remove(rank, tier, ext);
    }

    @Override
    public void clearWorker(long workerId) {
      wrote();
      inner.clearWorker(workerId);
    }

    @Override
    public void removeRank(WorkerRank rank) {
      wrote();
      inner.removeRank(rank);
    }
  }

  private final List<RecordingShard> shards = new CopyOnWriteArrayList<>();
  private final List<KvEventPublisher> engines = new ArrayList<>();
  private EventNode node;

  @AfterEach
  void stop() throws Exception {
    for (KvEventPublisher e : engines) {
      e.close();
    }
    if (node != null) {
      node.close();
    }
  }

  @Test
  void eachShardIsWrittenByItsOwnerPollerOnly() throws Exception {
    SelectionService service =
        SelectionService.builder()
            .indexFactory(
                () ->
                    new ShardedBlockIndex(
                        SHARDS,
                        () -> {
                          RecordingShard s = new RecordingShard();
                          shards.add(s);
                          return s;
                        }))
            .build();
    node = EventNode.start(POLLERS, service);
    for (int w = 1; w <= WORKERS; w++) {
      register(w, engine("engine-" + w));
    }
    for (int w = 1; w <= WORKERS; w++) {
      for (int r = 0; r < 2; r++) {
        awaitListening(w, r);
      }
    }
    int[] prompt = tokens(10, 12);
    for (int w = 1; w <= WORKERS; w++) {
      for (int r = 0; r < 2; r++) {
        engines.get(w - 1).publish(r, batch(r, stored(prompt, 0, 3)));
      }
    }
    awaitDepths(prompt, d -> d.values().stream().allMatch(v -> v == 3), "every rank stored");

    int[] stamped = tokens(500, 8);
    engines.get(0).publish(0, batch(1, stored(stamped, 0, 2)));
    awaitDepths(
        stamped,
        d -> d.get("1:1") == 2 && d.get("1:0") == 0,
        "a batch stamped dp_rank 1 on rank 0's socket");

    engines.get(1).publish(1, batch(1, new AllBlocksCleared()));
    awaitDepths(
        prompt,
        d -> d.get("2:0") == 0 && d.get("2:1") == 0 && d.get("3:0") == 3,
        "AllBlocksCleared on rank 1 clears both ranks of worker 2");

    KvEventPublisher moved = engine("engine-3-moved");
    register(3, moved);
    awaitDepths(
        prompt, d -> d.get("3:0") == 0 && d.get("3:1") == 0, "a new endpoint drops the old blocks");

    engines.get(3).restart();
    int[] after = tokens(900, 8);
    awaitDepths(
        after,
        d -> {
          engines.get(3).publish(0, batch(0, stored(after, 0, 2)));
          return d.get("4:0") == 2;
        },
        "worker 4's publisher restarted and publishes again");
    awaitDepths(
        prompt, d -> d.get("4:0") == 0 && d.get("4:1") == 3, "the restart reset rank 0 only");

    assertEquals(200, node.send("DELETE", "/workers/5", null).statusCode());
    awaitDepths(prompt, d -> !d.containsKey("5:0") && d.get("6:0") == 3, "worker 5 deleted");

    assertEquals(SHARDS, shards.size(), "one partition, four shards");
    Map<Integer, Set<String>> ingestWriters = new LinkedHashMap<>();
    Map<Integer, Set<String>> allWriters = new LinkedHashMap<>();
    for (int s = 0; s < SHARDS; s++) {
      Set<String> ingest = new TreeSet<>();
      for (String t : shards.get(s).writers) {
        if (t.startsWith("kvselect-zmq")) {
          ingest.add(t); // a poller writing directly: it must not
        } else if (t.startsWith("deployment:")) {
          ingest.add(verticleOf(t.substring("deployment:".length())));
        }
      }
      ingestWriters.put(s, ingest);
      allWriters.put(s, new TreeSet<>(shards.get(s).writers));
    }
    Set<Integer> hosting = new TreeSet<>();
    for (int w = 1; w <= WORKERS; w++) {
      for (int r = 0; r < 2; r++) {
        hosting.add(ShardedBlockIndex.shardOf(new WorkerRank(w, r), SHARDS));
      }
    }
    for (int s = 0; s < SHARDS; s++) {
      Set<String> expected =
          hosting.contains(s) ? Set.of("IndexShardVerticle " + (s % POLLERS)) : Set.of();
      assertEquals(expected, ingestWriters.get(s), "shard " + s + "; all writers: " + allWriters);
    }
    assertTrue(hosting.size() > 1, "the ranks spread over several shards: " + hosting);
  }

  /** The verticle deployed as {@code deploymentId}: {@code IndexShardVerticle <shard>}, or its class. */
  private String verticleOf(String deploymentId) {
    var d =
        ((io.vertx.core.internal.VertxInternal) node.node.vertx())
            .deploymentManager()
            .deployment(deploymentId);
    if (d == null) {
      return "gone " + deploymentId;
    }
    Object v = d.deployment().instances().iterator().next();
    return v instanceof IndexShardVerticle shard
        ? "IndexShardVerticle " + shard.shard()
        : v.getClass().getSimpleName();
  }

  private KvEventPublisher engine(String name) {
    KvEventPublisher p =
        new KvEventPublisher(name, "127.0.0.1", new int[2], null, "", ReplayLayout.TOPIC);
    engines.add(p);
    return p;
  }

  private void register(int worker, KvEventPublisher engine) throws Exception {
    List<String> eps = engine.ready().get(10, TimeUnit.SECONDS).publishers();
    node.json(
        "POST",
        "/workers",
        Map.of(
            "worker_id",
            worker,
            "endpoint",
            "http://127.0.0.1:1",
            "block_size",
            EventNode.BS,
            "data_parallel_size",
            2,
            "kv_events_endpoints",
            Map.of("0", eps.get(0), "1", eps.get(1))));
  }

  private void awaitListening(int worker, int rank) {
    KvEventPublisher engine = engines.get(worker - 1);
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(25))
        .until(
            () -> {
              engine.publish(
                  rank, batch(rank, new BlockRemoved(new long[] {42}, "GPU", null, null)));
              var l = node.listener(worker, rank);
              return l != null && l.get("batches").asLong() > 0;
            });
  }

  private void awaitDepths(
      int[] prompt, java.util.function.Predicate<Map<String, Integer>> done, String what) {
    await(what)
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(25))
        .until(() -> done.test(node.depths(prompt)));
  }
}
