package io.kvselect.server.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.SelectionService;
import io.kvselect.testing.ForwardingBlockIndex;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import java.net.http.HttpResponse;
import java.time.Duration;
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

  private static final int BS = EventNode.BS;

  /** Holds the first store after {@link #arm} until {@link #release}; everything else passes. */
  static final class GatedIndex extends ForwardingBlockIndex {
    private final AtomicBoolean armed = new AtomicBoolean();
    final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    GatedIndex(BlockIndex inner) {
      super(inner);
    }

    void arm() {
      armed.set(true);
    }

    void release() {
      released.countDown();
    }

    @Override
    public boolean store(
        WorkerRank rank,
        StorageTier tier,
        boolean hasParent,
        long parent,
        long[] ext,
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
  }

  private final GatedIndex gate = new GatedIndex(new ShardedBlockIndex(1, PrefixChainIndex::new));
  private EventNode node;
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
      node.close();
    }
  }

  @Test
  void aBatchInFlightFromTheOldEndpointDoesNotSurviveTheReRegistration() throws Exception {
    node = EventNode.start(1, SelectionService.builder().indexFactory(() -> gate).build());
    oldEngine = engine("old-engine");
    newEngine = engine("new-engine");
    String oldEndpoint = endpoint(oldEngine);
    String newEndpoint = endpoint(newEngine);
    int[] before = EventNode.tokens(100, 8);
    int[] inFlight = EventNode.tokens(200, 8);
    int[] later = EventNode.tokens(300, 8);
    int[] fresh = EventNode.tokens(400, 8);

    register(oldEndpoint);
    awaitListening(oldEngine);
    oldEngine.publish(0, batch(stored(before)));
    await().atMost(Duration.ofSeconds(10)).until(() -> depth(before) == 2);

    gate.arm();
    oldEngine.publish(0, batch(stored(inFlight)));
    assertTrue(
        gate.entered.await(10, TimeUnit.SECONDS),
        "the ingest thread reached the old batch's store");
    register(newEndpoint);
    gate.release();

    await("the old endpoint's blocks are gone and stay gone while it keeps publishing")
        .atMost(Duration.ofSeconds(10))
        .during(Duration.ofMillis(600))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              oldEngine.publish(0, batch(stored(inFlight), stored(later)));
              return depth(before) == 0 && depth(inFlight) == 0 && depth(later) == 0;
            });
    await("the new endpoint's blocks arrive")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(25))
        .until(
            () -> {
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
    HttpResponse<String> r =
        node.send(
            "POST",
            "/workers",
            Map.of(
                "worker_id",
                1,
                "endpoint",
                "http://127.0.0.1:1",
                "block_size",
                BS,
                "kv_events_endpoint",
                kvEndpoint));
    assertEquals(201, r.statusCode(), r.body());
  }

  /** Publishes throw-away removals until the worker's listener has received one. */
  private void awaitListening(KvEventPublisher engine) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(25))
        .until(
            () -> {
              engine.publish(0, batch(new BlockRemoved(new long[] {42}, "GPU", null, null)));
              JsonNode l = node.listener(1, 0);
              return l != null && l.get("batches").asLong() > 0;
            });
  }

  private int depth(int[] prompt) throws Exception {
    return node.depths(prompt).getOrDefault("1:0", 0);
  }

  private static BlockStored stored(int[] tokens) {
    return EventNode.stored(tokens, 0, tokens.length / BS);
  }

  private static byte[] batch(KvEvent... events) {
    return EventNode.batch(0, events);
  }
}
