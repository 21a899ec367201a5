package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.server.bus.Kvselect;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.Ports;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.dns.AddressResolverOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Liveness marks ({@code --liveness-grace-secs}) are each node's own (docs/cluster.md, "Known
 * holes"): two clustered nodes, one worker whose {@code health_url} answers one node and not the
 * other. Its host name resolves to 127.0.0.1 on node A, where the engine's health server listens,
 * and to 127.0.0.2 on node B (each node's Vert.x has its own hosts table, as two hosts with
 * different DNS would), so B's probes are refused. B takes the worker out, A keeps it, and the mark
 * is not copied. What a client sees follows: a session bound to that worker through A is rebound
 * by its next booking on B (a binding is soft when its worker is unschedulable where the booking
 * is made), and A then follows the new binding.
 */
class ClusteredLivenessTest {

  private static final long TIMEOUT_S = 60;
  private static final String HOST = "engine-1.kvselect.test";

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
  }

  private static Vertx vertx(HazelcastClusterManager mgr, String engineAddress) throws Exception {
    VertxOptions o =
        new VertxOptions()
            .setAddressResolverOptions(
                new AddressResolverOptions()
                    .setHostsValue(Buffer.buffer(engineAddress + " " + HOST + "\n")));
    o.getEventBusOptions().setHost("127.0.0.1").setPort(0);
    return get(Vertx.builder().with(o).withClusterManager(mgr).buildClustered());
  }

  private static JsonNode call(Kvselect k, String method, String path, Object body, int expected)
      throws Exception {
    ApplicationCluster.Reply r = ApplicationCluster.call(k, method, path, body);
    assertEquals(expected, r.status(), method + " " + path + ": " + r.body());
    return r.body();
  }

  @Test
  void aWorkerUnhealthyForOneNodeOnlyIsTakenOutThereAndItsSessionsRebindThroughIt()
      throws Exception {
    HttpServer engine = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    engine.createContext(
        "/health",
        ex -> {
          ex.sendResponseHeaders(200, -1);
          ex.close();
        });
    engine.start();
    String cluster = "kvs-test-" + UUID.randomUUID();
    List<Vertx> apps = new ArrayList<>();
    try {
      int port = Ports.free();
      HazelcastClusterManager first =
          new HazelcastClusterManager(
              ApplicationCluster.hazelcast(cluster, port, "127.0.0.1:" + port));
      apps.add(vertx(first, "127.0.0.1"));
      apps.add(
          vertx(
              new HazelcastClusterManager(ApplicationCluster.joining(cluster, first)),
              "127.0.0.2"));
      await().atMost(Duration.ofSeconds(TIMEOUT_S)).until(() -> first.getNodes().size() == 2);

      NodeSettings s =
          NodeSettings.parse(
              new String[] {
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--session-affinity-ttl-secs",
                "600",
                "--liveness-grace-secs",
                "0.4"
              },
              ClusterHarness.ENV);
      Kvselect a = get(Kvselect.deploy(apps.get(0), s));
      Kvselect b = get(Kvselect.deploy(apps.get(1), s));
      await()
          .atMost(Duration.ofSeconds(TIMEOUT_S))
          .until(
              () ->
                  a.peerSync().stats().received.get() > 0
                      && b.peerSync().stats().received.get() > 0);

      String healthUrl = "http://" + HOST + ":" + engine.getAddress().getPort() + "/health";
      call(
          a,
          "POST",
          "/workers",
          Map.of(
              "worker_id",
              1,
              "endpoint",
              "http://w1:8000",
              "block_size",
              16,
              "health_url",
              healthUrl),
          201);
      call(
          a,
          "POST",
          "/workers",
          Map.of("worker_id", 2, "endpoint", "http://w2:8000", "block_size", 16),
          201);
      await()
          .atMost(Duration.ofSeconds(TIMEOUT_S))
          .until(() -> b.service().listWorkers(null, null).size() == 2);

      // B's probes are refused: it takes worker 1 out after the grace; A's succeed, it keeps it
      await()
          .atMost(Duration.ofSeconds(TIMEOUT_S))
          .until(() -> b.service().worker(1).lifecycle() == Lifecycle.UNSCHEDULABLE);
      assertEquals(
          List.of("unreachable: health check " + healthUrl + " failing for more than 0.4 s"),
          b.service().worker(1).notSchedulableReasons());
      await()
          .during(Duration.ofMillis(1_500))
          .atMost(Duration.ofSeconds(10))
          .until(() -> a.service().worker(1).lifecycle() == Lifecycle.SCHEDULABLE);

      // a session bound to worker 1 through A
      String session = null;
      for (int i = 0; i < 40 && session == null; i++) {
        JsonNode r =
            call(
                a,
                "POST",
                "/select_and_reserve",
                Map.of(
                    "session_id",
                    "s-" + i,
                    "selection_id",
                    "first-" + i,
                    "token_ids",
                    ClusterSharedStateTest.tokens(i, 32)),
                200);
        if (r.path("worker_id").asLong() == 1) {
          session = "s-" + i;
        }
      }
      assertNotNull(session, "A books worker 1 for some session");
      assertEquals(
          2,
          call(
                  b,
                  "POST",
                  "/select",
                  Map.of(
                      "session_id", session, "token_ids", ClusterSharedStateTest.tokens(900, 32)),
                  200)
              .path("worker_id")
              .asLong(),
          "B does not answer the worker it has taken out");
      // the next booking of the session on B lands on worker 2 and rebinds it; A follows
      assertEquals(
          2,
          call(
                  b,
                  "POST",
                  "/select_and_reserve",
                  Map.of(
                      "session_id",
                      session,
                      "selection_id",
                      "turn-2",
                      "token_ids",
                      ClusterSharedStateTest.tokens(901, 32)),
                  200)
              .path("worker_id")
              .asLong());
      assertEquals(
          2,
          call(
                  a,
                  "POST",
                  "/select",
                  Map.of(
                      "session_id", session, "token_ids", ClusterSharedStateTest.tokens(902, 32)),
                  200)
              .path("worker_id")
              .asLong(),
          "A follows the binding B's booking made, although A still sees worker 1 as healthy");
      assertEquals(
          Lifecycle.SCHEDULABLE, a.service().worker(1).lifecycle(), "the mark stayed B's own");

      get(b.undeploy());
      get(a.undeploy());
    } finally {
      for (Vertx v : apps) {
        get(v.close());
      }
      engine.stop(0);
    }
  }
}
