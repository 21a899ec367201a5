package io.kvselect.server.events;

import static io.kvselect.server.events.EventNode.batch;
import static io.kvselect.server.events.EventNode.stored;
import static io.kvselect.server.events.EventNode.tokens;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link KvEventsCoordinator#hold}: while held, a node's listeners receive and count their
 * batches but the index does not change; {@link KvEventsCoordinator#release} applies them in the
 * order they came, resets included (a publisher restart), and later batches apply at once. A
 * listener opened during the hold holds too. A real node, real JeroMQ publishers.
 */
class HeldEventsTest {

  private static final int[] A = tokens(100, 8);
  private static final int[] B = tokens(500, 8);
  private static final int[] C = tokens(900, 8);

  @Test
  void heldBatchesAndResetsApplyInOrderOnRelease() throws Exception {
    try (EventNode node = EventNode.start(1);
        KvEventPublisher before = engine("held-before");
        KvEventPublisher during = engine("held-during")) {
      KvEventsCoordinator events = node.node.events();
      register(node, 1, before);
      awaitBatches(node, 1, before, 1);
      before.publish(0, batch(null, stored(A, 0, 2)));
      await().atMost(Duration.ofSeconds(20)).until(() -> depth(node, A, 1) == 2);

      events.hold().get(10, TimeUnit.SECONDS);
      register(node, 2, during); // opened while holding
      long seen1 = batches(node, 1);
      before.publish(0, batch(null, stored(B, 0, 2)));
      before.restart(); // the next batch has seq 0: the listener resets the rank
      before.publish(0, batch(null, stored(C, 0, 1)));
      awaitBatches(node, 2, during, 1);
      during.publish(0, batch(null, stored(A, 0, 2)));
      during.publish(0, batch(null, new AllBlocksCleared()));
      during.publish(0, batch(null, stored(B, 0, 1)));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> batches(node, 1) >= seen1 + 2 && batches(node, 2) >= 4);
      // received, not applied
      assertEquals(2, depth(node, A, 1));
      assertEquals(0, depth(node, B, 1));
      assertEquals(0, depth(node, C, 1));
      assertEquals(0, depth(node, A, 2));
      assertEquals(0, depth(node, B, 2));

      KvEventsCoordinator.HoldOutcome out = events.release().get(10, TimeUnit.SECONDS);
      assertEquals(0, out.dropped());
      // worker 1: A and B stored, then the restart dropped both, then C
      assertEquals(0, depth(node, A, 1));
      assertEquals(0, depth(node, B, 1));
      assertEquals(1, depth(node, C, 1));
      // worker 2: A stored, then cleared, then B
      assertEquals(0, depth(node, A, 2));
      assertEquals(1, depth(node, B, 2));

      during.publish(0, batch(null, stored(C, 0, 2)));
      await().atMost(Duration.ofSeconds(20)).until(() -> depth(node, C, 2) == 2);
      assertEquals(
          0, events.release().get(10, TimeUnit.SECONDS).applied(), "a second release has nothing");
    }
  }

  private static KvEventPublisher engine(String name) {
    return new KvEventPublisher(name, "127.0.0.1", new int[1], null, "", ReplayLayout.TOPIC);
  }

  private static void register(EventNode node, int worker, KvEventPublisher engine)
      throws Exception {
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
            "kv_events_endpoint",
            eps.get(0)));
  }

  /** Publishes no-op batches until the listener of {@code worker} has counted {@code n}. */
  private static void awaitBatches(EventNode node, int worker, KvEventPublisher engine, long n) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(25))
        .until(
            () -> {
              if (batches(node, worker) >= n) {
                return true;
              }
              engine.publish(
                  0,
                  batch(
                      null,
                      new io.kvselect.core.events.BlockRemoved(
                          new long[] {42}, "GPU", null, null)));
              return false;
            });
  }

  private static long batches(EventNode node, int worker) throws Exception {
    var l = node.listener(worker, 0);
    return l == null ? 0 : l.get("batches").asLong();
  }

  private static int depth(EventNode node, int[] prompt, int worker) throws Exception {
    return node.depths(prompt).getOrDefault(worker + ":0", 0);
  }
}
