package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.service.OverlapRow;
import io.kvselect.core.service.PromptInput;
import io.kvselect.core.service.SelectRequest;
import io.kvselect.core.service.SelectionService;
import io.kvselect.tools.mock.KvEventEncoder;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import io.kvselect.tools.mock.WireFormat;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * A node that joins a running cluster copies the worker catalog and the KV-event index from a peer
 * over the event bus before its own listeners go live: blocks an engine stored (and announced
 * through KV events) before the joiner existed give overlap on the joiner, although the engine
 * publishes nothing after it joined. The chunk size is tiny so the index crosses in many chunks.
 */
class IndexRecoveryOverBusTest {

  private static final int BS = 4;
  private static final int BLOCKS = 12;
  private static final RouterConfig ROUTER = SyncTestNode.router();

  private static int[] prompt() {
    int[] t = new int[BLOCKS * BS];
    for (int i = 0; i < t.length; i++) {
      t[i] = 7000 + i;
    }
    return t;
  }

  /** One BlockStored of every block of the prompt, hashed as engines and the router hash them. */
  private static byte[] batch(int[] tokens) {
    long[] chain =
        BlockHasher.sequenceHashes(
            BlockHasher.localBlockHashes(
                tokens, tokens.length, BS, BlockHasher.saltSeed(null, null), false, null));
    BlockStored s =
        new BlockStored(chain, false, 0, tokens, BS, "GPU", null, null, null, null, null, null);
    return KvEventEncoder.encode(new KvEventBatch(1.0, List.of(s), null), WireFormat.MAP);
  }

  /** A batch that changes nothing: the removal of a block nobody stored. */
  private static byte[] filler() {
    return KvEventEncoder.encode(
        new KvEventBatch(
            1.0, List.of(new BlockRemoved(new long[] {0x5eed_5eedL}, "GPU", null, null)), null),
        WireFormat.MAP);
  }

  private static int deviceDepth(SelectionService s, long worker) {
    SelectRequest q = SelectRequest.of(new PartitionKey(null, null), PromptInput.tokens(prompt()));
    for (OverlapRow r : s.inspection().overlapScores(q).workers()) {
      if (r.workerId() == worker) {
        return r.deviceBlocks();
      }
    }
    return -1;
  }

  @Test
  void aLateJoinerRecoversCatalogAndIndexFromAPeerBeforeItsListenersGoLive() throws Exception {
    SyncTestNode.Cluster cluster = SyncTestNode.Cluster.random();
    PeerSyncOptions opts = PeerSyncOptions.withInterval(Duration.ofSeconds(1)).withChunkBlocks(2);
    try (ZMQ.Context zmq = ZMQ.context(1);
        ZMQ.Socket pub = zmq.socket(SocketType.PUB)) {
      pub.setLinger(0);
      int port = pub.bindToRandomPort("tcp://127.0.0.1");
      WorkerSpec w =
          WorkerSpec.builder(7)
              .endpoint("http://w7")
              .kvEventsEndpoint("tcp://127.0.0.1:" + port)
              .blockSize(BS)
              .build();
      byte[] payload = batch(prompt());
      try (SyncTestNode a = SyncTestNode.start(cluster, opts, ROUTER, true)) {
        a.service.upsertWorker(w).toCompletableFuture().get(30, TimeUnit.SECONDS);
        long[] seq = {0};
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () -> {
                  pub.sendMore("kv".getBytes(StandardCharsets.UTF_8));
                  pub.sendMore(ByteBuffer.allocate(8).putLong(seq[0]++).array());
                  pub.send(payload);
                  return deviceDepth(a.service, 7) == BLOCKS;
                });
        long indexed = a.service.inspection().indexSize();

        try (SyncTestNode b = SyncTestNode.start(cluster, opts, ROUTER, true)) {
          assertEquals("done", b.sync.recovery().state());
          assertEquals(a.id(), b.sync.recovery().peer());
          assertEquals(indexed, b.sync.recovery().blocks());
          assertEquals(1, b.sync.recovery().workers());
          assertNotNull(b.service.worker(7));
          assertTrue(b.service.worker(7).schedulable());
          assertEquals(
              BLOCKS,
              deviceDepth(b.service, 7),
              "overlap on the joiner comes from the recovered index");
          assertEquals(indexed, b.service.inspection().indexSize());
          assertTrue(b.main.events() != null, "the joiner's KV-event listeners run");
        }
      }
    }
  }

  /**
   * A joiner facing an engine with a replay endpoint that has published more batches than its
   * replay ring keeps: the index it copied survives its first live batch, whose catch-up replay
   * from 0 comes back incomplete (it used to reset the rank: 12 blocks copied, 0 after).
   */
  @Test
  void theCopiedIndexSurvivesAnIncompleteReplayOnTheJoinersFirstBatch() throws Exception {
    SyncTestNode.Cluster cluster = SyncTestNode.Cluster.random();
    PeerSyncOptions opts = PeerSyncOptions.withInterval(Duration.ofSeconds(1));
    try (KvEventPublisher engine =
        new KvEventPublisher(
            "joiner-replay-engine", "127.0.0.1", new int[1], 0, "", ReplayLayout.TOPIC)) {
      KvEventPublisher.Endpoints ep = engine.ready().get(30, TimeUnit.SECONDS);
      WorkerSpec w =
          WorkerSpec.builder(8)
              .endpoint("http://w8")
              .kvEventsEndpoint(ep.publishers().get(0))
              .replayEndpoint(ep.replay())
              .blockSize(BS)
              .build();
      try (SyncTestNode a = SyncTestNode.start(cluster, opts, ROUTER, true)) {
        a.service.upsertWorker(w).toCompletableFuture().get(30, TimeUnit.SECONDS);
        byte[] prompt = batch(prompt());
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () -> {
                  engine.publish(0, prompt);
                  return deviceDepth(a.service, 8) == BLOCKS;
                });
        // push the prompt's batches out of the engine's replay ring
        byte[] filler = filler();
        for (int i = 0; i < KvEventPublisher.BUFFER_STEPS + 100; i++) {
          engine.publish(0, filler);
        }
        long target = KvEventPublisher.BUFFER_STEPS + 100;
        await().atMost(Duration.ofSeconds(60)).until(() -> engine.lastSeq(0) >= target);

        try (SyncTestNode b = SyncTestNode.start(cluster, opts, ROUTER, true)) {
          assertEquals("done", b.sync.recovery().state());
          assertEquals(BLOCKS, deviceDepth(b.service, 8), "the copied index");
          long before = engine.lastSeq(0);
          // live batches until the joiner's listener has taken one (and replayed what it could)
          await()
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(200))
              .until(
                  () -> {
                    engine.publish(0, filler);
                    return b.main.events().stats().values().stream()
                        .anyMatch(r -> r.lastSeq() > before);
                  });
          // the joiner keeps the copied blocks after its first live batch, for the next 500 ms too
          await()
              .during(Duration.ofMillis(500))
              .atMost(Duration.ofSeconds(5))
              .pollInterval(Duration.ofMillis(50))
              .failFast("the joiner lost copied blocks", () -> deviceDepth(b.service, 8) != BLOCKS)
              .until(() -> deviceDepth(b.service, 8) == BLOCKS);
          assertEquals(
              BLOCKS,
              deviceDepth(b.service, 8),
              "the joiner kept the copied blocks after its first live batch: "
                  + b.main.events().stats());
        }
      }
    }
  }

  @Test
  void theFirstNodeOfAClusterHasNoPeerToRecoverFrom() throws Exception {
    SyncTestNode.Cluster cluster = SyncTestNode.Cluster.random();
    try (SyncTestNode a =
        SyncTestNode.start(
            cluster, PeerSyncOptions.withInterval(Duration.ofSeconds(1)), ROUTER, false)) {
      assertEquals("no-peer", a.sync.recovery().state());
      assertEquals(0, a.service.listWorkers(null, null).size());
    }
  }
}
