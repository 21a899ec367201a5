package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.RecordingSink.Delivery;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The verticle owns the ingest threads: deploy starts them, undeploy stops them. */
@ExtendWith(VertxExtension.class)
class KvEventIngestVerticleTest {

  @Test
  void deployStartsAndUndeployStopsTheIngestThreads(Vertx vertx) throws Exception {
    RecordingSink sink = new RecordingSink();
    WorkerRank rank = new WorkerRank(9, 0);
    KvEventIngestVerticle verticle =
        new KvEventIngestVerticle(KvEventIngestOptions.defaults().withPollerThreads(2), sink);
    String id =
        vertx
            .deployVerticle(verticle)
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertEquals(
        List.of("kvselect-zmq-0", "kvselect-zmq-1", "kvselect-zmq-replay"),
        IngestThreads.named("kvselect-zmq"));
    try (TestPublisher pub = new TestPublisher("v")) {
      vertx.runOnContext(v -> verticle.ingest().subscribe(rank, pub.endpoint(), null));
      pub.awaitSubscribers(1);
      pub.publish(0);
      Delivery d = sink.take(rank, 1).get(0);
      assertEquals(0, d.seq());
      assertTrue(d.thread().startsWith("kvselect-zmq-"), d.thread());
    }
    vertx.undeploy(id).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertTrue(IngestThreads.named("kvselect-zmq").isEmpty(), "ingest threads left running");
    assertEquals(RankStats.State.CLOSED, verticle.ingest().stats().get(rank).state());
  }
}
