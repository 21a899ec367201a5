package io.kvselect.server.bus;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.load.LoadEvent;
import io.kvselect.server.MainVerticle;
import io.kvselect.server.api.HttpApiVerticle;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.sync.replica.ReplicaSyncVerticle;
import io.kvselect.server.sync.replica.ReplicaWire;
import io.kvselect.testing.Deployed;
import io.kvselect.testing.Ports;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The node is the verticles of its design card, each deployed once as a child of its one root, and
 * they hand work to each other over node-internal addresses ({@link LocalAddresses}) with the
 * {@link LocalCodec}: a booking made through the event-bus API travels from the selection service
 * over {@link LocalAddresses#REPLICA_LOAD} to the replica-sync verticle, which publishes it on its
 * ZMQ PUB (read here by a plain JeroMQ SUB). Undeploying the root takes the consumer and the PUB
 * with it; a start that fails half-way leaves no verticle and no bound port behind.
 */
class NodeVerticlesTest {

  private static List<String> deployed(Vertx vertx) {
    return Deployed.verticles(vertx);
  }

  @Test
  void bookingStepsTravelFromTheServiceOverTheLocalAddressToTheReplicaVerticlesPub()
      throws Exception {
    try (BusHarness h = new BusHarness("--replica-sync-port", "0");
        ZContext ctx = new ZContext(1)) {
      assertEquals(
          List.of(
              EventBusApi.class.getSimpleName(),
              HttpApiVerticle.class.getSimpleName(),
              MainVerticle.class.getSimpleName() + " (root)",
              ReplicaSyncVerticle.class.getSimpleName()),
          deployed(h.vertx),
          "one root; the replica sync, HTTP API and event-bus API are its children");
      h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
      ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
      sub.setLinger(0);
      sub.setHandshakeIvl(io.kvselect.server.events.KvEventIngestOptions.HANDSHAKE_IVL_MS);
      sub.subscribe(ReplicaWire.SEQUENCE_TOPIC.getBytes(StandardCharsets.UTF_8));
      sub.connect("tcp://127.0.0.1:" + h.kvselect.replicaSync().port());
      AtomicInteger probe = new AtomicInteger();
      List<ReplicaWire.SequenceEvent> seen = new ArrayList<>();
      // past the PUB/SUB slow-joiner window: book until the SUB reads a step
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                String id = "probe-" + probe.incrementAndGet();
                h.ok(
                    BusAddresses.SELECT_AND_RESERVE,
                    new JsonObject()
                        .put("selection_id", id)
                        .put("token_ids", new JsonArray().add(1).add(2).add(3).add(4)));
                for (byte[] topic; (topic = sub.recv(ZMQ.DONTWAIT)) != null; ) {
                  assertEquals(
                      ReplicaWire.SEQUENCE_TOPIC, new String(topic, StandardCharsets.UTF_8));
                  seen.add(ReplicaWire.decodeSequence(sub.recv()));
                }
                return !seen.isEmpty();
              });
      ReplicaWire.SequenceEvent first = seen.get(0);
      assertEquals(
          ReplicaWire.Kind.ADD_REQUEST,
          first.kind(),
          "a booking is published as Dynamo's AddRequest: " + first);
      assertTrue(first.requestId().startsWith("probe-"), first.toString());
      assertEquals(1L, first.workerId(), first.toString());

      h.kvselect.undeploy().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
      assertEquals(List.of(), deployed(h.vertx), "nothing of the node left deployed");
      BusHarness.Answer after = h.send(LocalAddresses.REPLICA_LOAD, new JsonObject());
      assertEquals(
          ReplyFailure.NO_HANDLERS,
          after.failureType(),
          "the replica verticle's consumer went with it: " + after);
    }
  }

  @Test
  void theSessionTablesHousekeepingGoesOverItsAddressAndTheRequestPathReadsItInline()
      throws Exception {
    try (BusHarness h = new BusHarness("--session-affinity-ttl-secs", "600")) {
      assertEquals(
          List.of(
              EventBusApi.class.getSimpleName(),
              HttpApiVerticle.class.getSimpleName(),
              MainVerticle.class.getSimpleName() + " (root)",
              "SessionAffinityVerticle"),
          deployed(h.vertx),
          "the session table has a verticle of its own");
      List<String> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
      h.vertx
          .eventBus()
          .addOutboundInterceptor(
              ctx -> {
                if (ctx.message().address().equals(LocalAddresses.SESSION_AFFINITY)) {
                  calls.add(ctx.body().getClass().getSimpleName());
                }
                ctx.next();
              });
      h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
      h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(2));
      JsonObject booked =
          h.ok(
              BusAddresses.SELECT_AND_RESERVE,
              new JsonObject()
                  .put("selection_id", "s-1")
                  .put("session_id", "chat-1")
                  .put("token_ids", new JsonArray().add(1).add(2).add(3).add(4)));
      long worker = booked.getLong("worker_id");
      JsonObject again =
          h.ok(
              BusAddresses.SELECT,
              new JsonObject()
                  .put("session_id", "chat-1")
                  .put("token_ids", new JsonArray().add(9).add(9).add(9).add(9)));
      assertEquals(
          worker,
          again.getLong("worker_id"),
          "the binding made through the verticle is read back: " + again);
      h.ok(BusAddresses.FREE, new JsonObject().put("selection_id", "s-1"));
      // the node's periodic expiry may send its idle sweep meanwhile: that is housekeeping
      assertEquals(
          List.of(),
          calls.stream().filter(c -> !c.equals("Sweep")).toList(),
          "the request path calls the table inline");
      // deleting a worker drops its bindings through the table's verticle
      h.ok(BusAddresses.WORKERS_DELETE, new JsonObject().put("worker_id", worker));
      await().atMost(Duration.ofSeconds(10)).until(() -> calls.contains("RemoveWorker"));
      JsonObject moved =
          h.ok(
              BusAddresses.SELECT,
              new JsonObject()
                  .put("session_id", "chat-1")
                  .put("token_ids", new JsonArray().add(9).add(9).add(9).add(9)));
      assertTrue(
          moved.getLong("worker_id") != worker,
          "the binding to the deleted worker is gone: " + moved);

      BusHarness.HttpAnswer bad =
          h.http(
              "POST",
              "/select",
              new JsonObject()
                  .put("session_id", "x".repeat(300))
                  .put("token_ids", new JsonArray().add(1))
                  .encode());
      assertEquals(400, bad.status(), bad.body());
      assertTrue(
          bad.body().contains("session_id"),
          "a bad session id is still a 400 naming the field: " + bad.body());

      h.kvselect.undeploy().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
      BusHarness.Answer after = h.send(LocalAddresses.SESSION_AFFINITY, new JsonObject());
      assertEquals(
          ReplyFailure.NO_HANDLERS,
          after.failureType(),
          "the table's verticle went with the node: " + after);
    }
  }

  @Test
  void aStartThatFailsAfterTheReplicaVerticleLeavesNothingDeployedAndItsPortFree()
      throws Exception {
    Vertx vertx = Vertx.vertx();
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      int replicaPort = Ports.free();
      NodeSettings s =
          NodeSettings.parse(
              new String[] {
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(taken.getLocalPort()),
                "--replica-sync-port",
                Integer.toString(replicaPort)
              },
              Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
      ExecutionException failed =
          assertThrows(
              ExecutionException.class,
              () ->
                  Kvselect.deploy(vertx, s)
                      .toCompletionStage()
                      .toCompletableFuture()
                      .get(30, TimeUnit.SECONDS),
              "the HTTP port is taken");
      assertFalse(String.valueOf(failed.getCause()).isEmpty());
      assertEquals(
          List.of(),
          deployed(vertx),
          "the replica verticle deployed before the failure was undeployed");
      // the PUB the replica verticle had bound is closed again: the port can be bound
      await()
          .atMost(Duration.ofSeconds(10))
          .ignoreExceptions()
          .until(
              () -> {
                try (ServerSocket again =
                    new ServerSocket(replicaPort, 50, InetAddress.getLoopbackAddress())) {
                  return again.getLocalPort() == replicaPort;
                }
              });
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void aNodeInternalMessageRefusesTheWire() {
    Vertx vertx = Vertx.vertx();
    try {
      LocalCodec.register(vertx);
      LocalCodec.register(vertx); // a second node on the same Vert.x shares the registration
      assertTrue(LocalCodec.options().isLocalOnly(), "node-internal sends stay on the node");
      assertEquals(LocalCodec.NAME, LocalCodec.options().getCodecName());
      LoadEvent step =
          new LoadEvent.Freed(new io.kvselect.core.catalog.PartitionKey("m", "g"), "r-1");
      Object passed =
          vertx
              .eventBus()
              .localConsumer("kvselect.test.local", m -> m.reply(m.body(), LocalCodec.options()))
              .completion()
              .compose(
                  v -> vertx.eventBus().request("kvselect.test.local", step, LocalCodec.options()))
              .map(m -> m.body())
              .toCompletionStage()
              .toCompletableFuture()
              .join();
      assertTrue(passed == step, "the core record itself is handed over, not a copy");
      IllegalStateException wire =
          assertThrows(
              IllegalStateException.class,
              () -> LocalCodec.INSTANCE.encodeToWire(Buffer.buffer(), step));
      assertTrue(wire.getMessage().contains("LoadEvent"), wire.getMessage());
    } finally {
      vertx.close();
    }
  }
}
