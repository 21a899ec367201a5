package io.kvselect.server.bus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Kvselect#undeploy} leaves nothing of kvselect in the application's Vert.x: every verticle
 * of the node is a child of its one {@code MainVerticle}, the workers-file and liveness watchers
 * included (they used to be deployed beside it and outlived the handle, still rewriting the
 * catalog from the file), and the event-bus API stops answering.
 */
class EmbeddedUndeployTest {

  @Test
  void undeployingTheHandleStopsEveryVerticleItDeployedAndTheVertxStaysUp(@TempDir Path dir)
      throws Exception {
    Path file = dir.resolve("workers.yaml");
    Files.writeString(file, "- worker_id: 1\n  endpoint: http://127.0.0.1:9/\n  block_size: 16\n");
    try (BusHarness h =
        new BusHarness(
            "--workers-file",
            file.toString(),
            "--workers-file-poll-secs",
            "0.05",
            "--liveness-grace-secs",
            "30")) {
      Set<String> deployed = Set.copyOf(h.vertx.deploymentIDs());
      // root, HTTP API, event-bus API, workers file, liveness (no KV-event ingestion in approximate
      // mode)
      assertEquals(5, deployed.size(), "deployments: " + deployed);
      assertTrue(
          deployed.contains(h.kvselect.deploymentId()), "the handle names the root: " + deployed);
      BusHarness.Answer listed = h.send(BusAddresses.WORKERS_LIST, new JsonObject());
      assertTrue(listed.ok(), "listed: " + listed);
      assertEquals(
          1,
          ((io.vertx.core.json.JsonArray) listed.body()).size(),
          "the workers file was applied: " + listed);

      h.kvselect.undeploy().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);

      assertEquals(
          Set.of(), Set.copyOf(h.vertx.deploymentIDs()), "nothing of kvselect left deployed");
      BusHarness.Answer after = h.send(BusAddresses.WORKERS_LIST, new JsonObject());
      assertEquals(
          ReplyFailure.NO_HANDLERS, after.failureType(), "the event-bus API stopped: " + after);
      // the application's Vert.x is still usable
      assertEquals(
          "up",
          h.vertx
              .executeBlocking(() -> "up")
              .toCompletionStage()
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS));
    }
  }
}
