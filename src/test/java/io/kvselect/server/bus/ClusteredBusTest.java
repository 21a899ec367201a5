package io.kvselect.server.bus;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.cluster.ApplicationCluster;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.Ports;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A separate clustered Vert.x application (a plain Vert.x with the Hazelcast cluster manager, not
 * a kvselect node) uses kvselect over the clustered event bus: kvselect is deployed with
 * {@link Kvselect#deploy} into another clustered Vert.x of the same JVM (bus only, no HTTP);
 * the application registers a worker, selects and reserves, reserves explicitly, frees, sees a
 * failure's HTTP status and envelope, and receives the published selection and worker events.
 * Loopback only, ephemeral Hazelcast and event-bus ports, a random cluster name.
 */
class ClusteredBusTest {

  private static final long TIMEOUT_MS = 20_000;

  private static <T> T get(io.vertx.core.Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
  }

  private static Object request(Vertx app, String address, Object body) throws Exception {
    Message<Object> m =
        get(
            app.eventBus()
                .request(address, body, new DeliveryOptions().setSendTimeout(TIMEOUT_MS)));
    return m.body();
  }

  @Test
  void aSeparateClusteredApplicationSelectsReservesAndFollowsTheEvents() throws Exception {
    String cluster = "kvs-test-" + UUID.randomUUID();
    int port = Ports.free();
    HazelcastClusterManager kvMgr =
        new HazelcastClusterManager(
            ApplicationCluster.hazelcast(cluster, port, "127.0.0.1:" + port));
    Vertx kv = ApplicationCluster.vertx(kvMgr);
    try {
      int actual =
          kvMgr.getHazelcastInstance().getCluster().getLocalMember().getAddress().getPort();
      HazelcastClusterManager appMgr =
          new HazelcastClusterManager(
              ApplicationCluster.hazelcast(cluster, Ports.free(), "127.0.0.1:" + actual));
      Vertx app = ApplicationCluster.vertx(appMgr);
      try {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> kvMgr.getNodes().size() == 2 && appMgr.getNodes().size() == 2);
        run(kv, kvMgr, app);
      } finally {
        get(app.close());
      }
    } finally {
      get(kv.close());
    }
  }

  private void run(Vertx kv, HazelcastClusterManager kvMgr, Vertx app) throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host", "127.0.0.1", "--port", "0", "--session-affinity-ttl-secs", "600"
            },
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    Kvselect k = get(Kvselect.deploy(kv, s, io.kvselect.server.NodeParts.standalone(s, kv), 0));
    assertEquals(-1, k.httpPort(), "bus only: no HTTP server");
    assertEquals(kvMgr.getNodeId(), k.node(), "clustered events name the cluster node");

    LinkedBlockingQueue<JsonObject> selections = new LinkedBlockingQueue<>();
    LinkedBlockingQueue<JsonObject> workers = new LinkedBlockingQueue<>();
    MessageConsumer<JsonObject> sc =
        app.eventBus()
            .consumer(
                BusAddresses.EVENTS_SELECTIONS,
                m -> {
                  if (!m.body().containsKey("probe")) {
                    selections.add(m.body());
                  }
                });
    CompletableFuture<Void> probed = new CompletableFuture<>();
    MessageConsumer<JsonObject> wc =
        app.eventBus()
            .consumer(
                BusAddresses.EVENTS_WORKERS,
                m -> {
                  if (m.body().containsKey("probe")) {
                    probed.complete(null);
                  } else {
                    workers.add(m.body());
                  }
                });
    get(sc.completion());
    get(wc.completion());
    // subscriptions reach the other member asynchronously: publish probes from the kvselect side
    // until one arrives, so that the events published next are not lost to a stale view
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              kv.eventBus()
                  .publish(BusAddresses.EVENTS_WORKERS, new JsonObject().put("probe", true));
              return probed.isDone();
            });
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .ignoreExceptionsMatching(
            e ->
                e instanceof ExecutionException
                    && e.getCause() instanceof ReplyException re
                    && re.failureType() == ReplyFailure.NO_HANDLERS)
        .until(
            () -> request(app, BusAddresses.WORKERS_LIST, new JsonObject()) instanceof JsonArray);

    JsonObject w =
        (JsonObject)
            request(
                app,
                BusAddresses.WORKERS_CREATE,
                new JsonObject()
                    .put("worker_id", 7)
                    .put("endpoint", "http://worker-7:8000")
                    .put("block_size", 4));
    assertEquals("schedulable", w.getString("lifecycle"));
    JsonObject we = workers.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    assertNotNull(we, "worker event");
    assertEquals(1, we.getInteger("v"));
    assertEquals("registered", we.getString("kind"));
    assertEquals(7L, we.getLong("worker_id"));
    assertEquals("schedulable", we.getString("lifecycle"));
    assertEquals(kvMgr.getNodeId(), we.getString("node"));

    JsonObject body =
        new JsonObject()
            .put("selection_id", "app-1")
            .put("session_id", "conv-9")
            .put("token_ids", new JsonArray(List.of(1, 2, 3, 4, 5, 6, 7, 8)));
    JsonObject booked = (JsonObject) request(app, BusAddresses.SELECT_AND_RESERVE, body);
    assertEquals(7L, booked.getLong("worker_id"));
    assertEquals("http://worker-7:8000", booked.getString("endpoint"));
    assertEquals("app-1", booked.getString("selection_id"));
    JsonObject se = selections.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    assertNotNull(se, "selection event");
    assertEquals(1, se.getInteger("v"));
    assertEquals("app-1", se.getString("selection_id"));
    assertEquals(7L, se.getLong("worker_id"));
    assertEquals(0, se.getInteger("dp_rank"));
    assertEquals("conv-9", se.getString("session_id"));
    assertEquals("default", se.getString("model_name"));
    assertEquals(kvMgr.getNodeId(), se.getString("node"));
    assertEquals(1, k.service().bookingCount());

    JsonObject reserved =
        (JsonObject)
            request(
                app,
                BusAddresses.RESERVE,
                new JsonObject()
                    .put("selection_id", "app-2")
                    .put("worker_id", 7)
                    .put("token_ids", new JsonArray(List.of(1, 2))));
    assertEquals("app-2", reserved.getString("selection_id"));
    assertEquals(
        "app-2", selections.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS).getString("selection_id"));

    ExecutionException bad =
        org.junit.jupiter.api.Assertions.assertThrows(
            ExecutionException.class,
            () ->
                request(
                    app,
                    BusAddresses.SELECT_AND_RESERVE,
                    body.copy().put("token_ids", "not an array")));
    ReplyException re = assertInstanceOf(ReplyException.class, bad.getCause());
    assertEquals(422, re.failureCode());
    assertTrue(
        new JsonObject(re.getMessage()).getString("error").contains("`token_ids`"),
        re.getMessage());

    for (String id : List.of("app-1", "app-2")) {
      assertEquals(
          new JsonObject().put("status", "ok"),
          request(app, BusAddresses.FREE, new JsonObject().put("selection_id", id)));
    }
    assertEquals(0, k.service().bookingCount());
    get(k.undeploy());
  }
}
