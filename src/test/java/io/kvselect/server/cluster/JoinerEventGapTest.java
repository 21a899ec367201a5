package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.service.PartitionDump;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.RankStats;
import io.kvselect.tools.mock.KvEventEncoder;
import io.kvselect.tools.mock.WireFormat;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * A node that joins while an engine keeps publishing ends with the same index as the peer it
 * copied from: the KV events published between the peer's snapshot and the joiner's first live
 * batch are not lost. A real JeroMQ publisher (no replay endpoint) stores a new block every
 * millisecond and removes every third one again, before, during and after the joiner's copy; once
 * it stops and both nodes have applied its last batch, the joiner's {@code /dump} equals the
 * peer's. Before the joiner held its listeners' events across the copy it lost the blocks of that
 * window (its listeners went live only after the copy).
 */
class JoinerEventGapTest {

  private static final int BS = 4;
  private static final RouterConfig ROUTER = SyncTestNode.router();

  /** Batch {@code i}: store block {@code i}; every third batch also removes block {@code i - 2}. */
  private static byte[] batch(long i) {
    int[] tokens = new int[BS];
    for (int t = 0; t < BS; t++) {
      tokens[t] = (int) (i * BS + t + 1);
    }
    List<KvEvent> events = new java.util.ArrayList<>();
    events.add(
        new BlockStored(
            new long[] {1_000_000L + i},
            false,
            0,
            tokens,
            BS,
            "GPU",
            null,
            null,
            null,
            null,
            null,
            null));
    if (i % 3 == 2) {
      events.add(new BlockRemoved(new long[] {1_000_000L + i - 2}, "GPU", null, null));
    }
    return KvEventEncoder.encode(new KvEventBatch(1.0, events, null), WireFormat.MAP);
  }

  private static Set<StoredBlock> dump(SelectionService s) {
    Set<StoredBlock> out = new HashSet<>();
    for (PartitionDump d : s.inspection().dump()) {
      out.addAll(d.blocks());
    }
    return out;
  }

  private static long lastSeq(SyncTestNode n) {
    Map<?, RankStats> stats = n.main.events().stats();
    return stats.values().stream().mapToLong(RankStats::lastSeq).max().orElse(-1);
  }

  @Test
  void aJoinerCopyingWhileTheEnginePublishesEndsWithThePeersIndex() throws Exception {
    SyncTestNode.Cluster cluster = SyncTestNode.Cluster.random();
    // small chunks: the copy takes many round trips, so the engine publishes many batches during it
    PeerSyncOptions opts = PeerSyncOptions.withInterval(Duration.ofSeconds(1)).withChunkBlocks(64);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong sent = new AtomicLong(-1);
    CompletableFuture<Integer> bound = new CompletableFuture<>();
    Thread engine =
        new Thread(
            () -> {
              try (ZMQ.Context zmq = ZMQ.context(1);
                  ZMQ.Socket pub = zmq.socket(SocketType.PUB)) {
                pub.setLinger(0);
                pub.setSndHWM(0);
                bound.complete(pub.bindToRandomPort("tcp://127.0.0.1"));
                byte[] topic = "kv".getBytes(StandardCharsets.UTF_8);
                for (long seq = 0; !stop.get() && seq < 2_000_000; seq++) {
                  pub.sendMore(topic);
                  pub.sendMore(ByteBuffer.allocate(8).putLong(seq).array());
                  pub.send(batch(seq));
                  sent.set(seq);
                  Thread.sleep(1);
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "test-engine");
    engine.setDaemon(true);
    engine.start();
    try {
      int port = bound.get(30, TimeUnit.SECONDS);
      WorkerSpec w =
          WorkerSpec.builder(9)
              .endpoint("http://w9")
              .kvEventsEndpoint("tcp://127.0.0.1:" + port)
              .blockSize(BS)
              .build();
      try (SyncTestNode a = SyncTestNode.start(cluster, opts, ROUTER, true)) {
        a.service.upsertWorker(w).toCompletableFuture().get(30, TimeUnit.SECONDS);
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> a.service.inspection().indexSize() >= 1_500);
        try (SyncTestNode b = SyncTestNode.start(cluster, opts, ROUTER, true)) {
          assertEquals("done", b.sync.recovery().state());
          @SuppressWarnings("unchecked")
          Map<String, Object> recovery = (Map<String, Object>) b.sync.json().get("recovery");
          long joined = sent.get();
          await().atMost(Duration.ofSeconds(30)).until(() -> sent.get() > joined + 300);
          stop.set(true);
          engine.join(10_000);
          long last = sent.get();
          await()
              .atMost(Duration.ofSeconds(30))
              .until(() -> lastSeq(a) == last && lastSeq(b) == last);
          Set<StoredBlock> peer = dump(a.service);
          Set<StoredBlock> joiner = dump(b.service);
          Set<StoredBlock> missing = new HashSet<>(peer);
          missing.removeAll(joiner);
          Set<StoredBlock> extra = new HashSet<>(joiner);
          extra.removeAll(peer);
          assertTrue(
              missing.isEmpty() && extra.isEmpty(),
              "joiner index differs from the peer's: "
                  + missing.size()
                  + " missing, "
                  + extra.size()
                  + " extra of "
                  + peer.size()
                  + "; "
                  + recovery);
          assertTrue(peer.size() > 1_500, "blocks: " + peer.size());
          assertEquals(0L, recovery.get("held_events_dropped"), String.valueOf(recovery));
          assertEquals(
              0,
              ((Number) recovery.get("listeners_unconnected_at_copy")).intValue(),
              String.valueOf(recovery));
          assertEquals(
              0,
              ((Number) recovery.get("listeners_without_batch_at_copy")).intValue(),
              String.valueOf(recovery));
          assertTrue(
              ((Number) recovery.get("held_events_applied")).longValue() > 0,
              "the engine published during the copy: " + recovery);
        }
      }
    } finally {
      stop.set(true);
      engine.join(10_000);
    }
  }
}
