package io.kvselect.server.api;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.sync.replica.ReplicaWire;
import io.kvselect.testing.Ports;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A clustered node also publishes its bookings on the replica mesh (its load sync goes to the
 * cluster and to the mesh), so a Dynamo-style replica beside a kvselect cluster follows its load.
 */
class ReplicaSyncClusteredTest {

  static {
    // tests only: skip Hazelcast's pause before joining
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
  }

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private int call(KvselectNode n, String method, String path, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.port() + path))
            .timeout(Duration.ofSeconds(30));
    if (body != null) {
      b.header("content-type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  @Test
  void clusteredNodePublishesItsBookingsToReplicaPeers() throws Exception {
    int clusterPort = Ports.free();
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--cluster",
              "--cluster-name",
              "kvs-test-" + UUID.randomUUID(),
              "--cluster-members",
              "127.0.0.1:" + clusterPort,
              "--cluster-port",
              Integer.toString(clusterPort),
              "--replica-sync-port",
              "0"
            },
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    KvselectNode a =
        KvselectNode.start(s).toCompletionStage().toCompletableFuture().get(90, TimeUnit.SECONDS);
    try (NodeHarness b =
        NodeHarness.approximate(
            "--replica-sync-port",
            "0",
            "--replica-sync-peers",
            "tcp://127.0.0.1:" + a.replicaSync().port())) {
      String worker = "{\"worker_id\":1,\"endpoint\":\"http://w1:8000\",\"block_size\":4}";
      assertEquals(201, call(a, "POST", "/workers", worker));
      b.worker(1);
      AtomicInteger i = new AtomicInteger();
      java.util.List<Integer> statuses = new java.util.concurrent.CopyOnWriteArrayList<>();
      java.util.function.Supplier<String> state =
          () ->
              "probes "
                  + i.get()
                  + ", last statuses "
                  + statuses.subList(Math.max(0, statuses.size() - 4), statuses.size())
                  + "; "
                  + LinkDiagnostics.describe("a", a.replicaSync())
                  + "; "
                  + LinkDiagnostics.describe("b", b.node.replicaSync());
      try {
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100))
            .conditionEvaluationListener(LinkDiagnostics.onTimeout(state))
            .until(
                () -> {
                  String id = "probe-" + i.incrementAndGet();
                  statuses.add(
                      call(
                          a,
                          "POST",
                          "/select_and_reserve",
                          "{\"selection_id\":\"" + id + "\",\"token_ids\":[7,7,7,7]}"));
                  statuses.add(call(a, "DELETE", "/reservations/" + id, null));
                  return b.node.replicaSync().count("in", ReplicaWire.SEQUENCE_TOPIC, "applied")
                      > 0;
                });
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError("replica link from the clustered node not up: " + state.get(), e);
      }
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> b.load(1, 0).get("active_requests").asLong() == 0);
      assertEquals(
          200,
          call(
              a,
              "POST",
              "/select_and_reserve",
              "{\"selection_id\":\"c-1\",\"token_ids\":[1,2,3,4]}"));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> b.load(1, 0).get("active_requests").asLong() == 1);
      assertEquals(200, call(a, "DELETE", "/reservations/c-1", null));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> b.load(1, 0).get("active_requests").asLong() == 0);
    } finally {
      a.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
  }
}
