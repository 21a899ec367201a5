package io.kvselect.server.bus;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.api.LinkDiagnostics;
import io.kvselect.server.sync.replica.ReplicaSync;
import io.kvselect.server.sync.replica.ReplicaWire;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * {@link Kvselect#deploy} runs Dynamo's replica sync when its settings say {@code --replica-sync-port},
 * as {@code bin/kvselect} does (it used to build the sync and never start it: the peer routes
 * answered 409 "disabled" and nothing was published), and undeploying stops it.
 */
class EmbeddedReplicaSyncTest {

  @Test
  void anEmbeddedNodePublishesItsBookingsToItsReplicaPeersAndStopsWithTheHandle() throws Exception {
    int port;
    try (BusHarness a = new BusHarness("--replica-sync-port", "0")) {
      ReplicaSync rs = a.kvselect.replicaSync();
      assertNotNull(rs, "replica sync built from the settings");
      port = rs.port();
      assertTrue(port > 0, "bound port read back: " + port);
      BusHarness.HttpAnswer peers = a.http("GET", "/replica_sync/peers", null);
      assertEquals(200, peers.status(), peers.body());
      assertEquals("[]", peers.body().replace(" ", ""));
      try (BusHarness b =
          new BusHarness(
              "--replica-sync-port", "0", "--replica-sync-peers", "tcp://127.0.0.1:" + port)) {
        a.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
        b.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
        ReplicaSync in = b.kvselect.replicaSync();
        AtomicInteger probe = new AtomicInteger();
        List<Integer> statuses = new CopyOnWriteArrayList<>();
        Supplier<String> state =
            () ->
                "probes "
                    + probe.get()
                    + ", last statuses "
                    + statuses.subList(Math.max(0, statuses.size() - 4), statuses.size())
                    + "; "
                    + LinkDiagnostics.describe("a", rs)
                    + "; "
                    + LinkDiagnostics.describe("b", in);
        // past the PUB/SUB slow-joiner window: book and free on A until B has applied one step
        try {
          await()
              .atMost(Duration.ofSeconds(40))
              .pollInterval(Duration.ofMillis(50))
              .conditionEvaluationListener(LinkDiagnostics.onTimeout(state))
              .until(
                  () -> {
                    String id = "probe-" + probe.incrementAndGet();
                    statuses.add(
                        a.http(
                                "POST",
                                "/select_and_reserve",
                                new JsonObject()
                                    .put("selection_id", id)
                                    .put(
                                        "token_ids",
                                        new io.vertx.core.json.JsonArray()
                                            .add(7)
                                            .add(7)
                                            .add(7)
                                            .add(7))
                                    .encode())
                            .status());
                    statuses.add(a.http("DELETE", "/reservations/" + id, null).status());
                    return in.count("in", ReplicaWire.SEQUENCE_TOPIC, "applied") > 0;
                  });
        } catch (ConditionTimeoutException e) {
          throw new AssertionError(
              "replica link between the embedded nodes not up: " + state.get(), e);
        }
      }
      a.kvselect.undeploy().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    // the PUB's port is free again once the handle (and its Vert.x) stopped
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return true;
              } catch (java.io.IOException e) {
                return false;
              }
            });
  }

  @Test
  void withoutTheFlagThereIsNoReplicaSync() throws Exception {
    try (BusHarness a = new BusHarness()) {
      assertNull(a.kvselect.replicaSync());
      assertEquals(200, a.http("GET", "/replica_sync/peers", null).status());
    }
  }
}
