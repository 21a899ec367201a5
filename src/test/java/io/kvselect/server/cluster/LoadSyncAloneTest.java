package io.kvselect.server.cluster;

import static io.kvselect.server.cluster.LoadSyncClusterTest.join;
import static io.kvselect.server.cluster.LoadSyncClusterTest.request;
import static io.kvselect.server.cluster.LoadSyncClusterTest.requests;
import static io.kvselect.server.cluster.LoadSyncClusterTest.worker;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.config.RouterConfig;
import io.vertx.core.buffer.Buffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A member that the cluster lists alone does not encode or publish its booking steps (nobody can
 * receive them), and a node that joins later still sees every booking it made meanwhile (from the
 * digest it asks for when it first hears the sender), then each new step on the stream. Real
 * Hazelcast members in one JVM, loopback, random cluster name.
 */
class LoadSyncAloneTest {

  private static final Duration CONVERGED = Duration.ofSeconds(20);
  private static final RouterConfig ROUTER =
      SyncTestNode.router("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "1.0");

  @Test
  void aNodeAloneSkipsItsLoadStepsAndAJoinerStillSeesItsBookings() throws Exception {
    SyncTestNode.Cluster cluster = SyncTestNode.Cluster.random();
    PeerSyncOptions opts = PeerSyncOptions.withInterval(Duration.ofSeconds(1));
    SyncTestNode a = SyncTestNode.start(cluster, opts, ROUTER, false);
    SyncTestNode b = null;
    try {
      AtomicInteger loadStepsOut = new AtomicInteger();
      a.vertx
          .eventBus()
          .addOutboundInterceptor(
              ctx -> {
                if (SyncAddresses.STREAM.equals(ctx.message().address())
                    && ctx.body() instanceof Buffer buf
                    && buf.toString().contains("\"kind\":\"booked\"")) {
                  loadStepsOut.incrementAndGet();
                }
                ctx.next();
              });
      join(a.service.upsertWorker(worker(701, "alone", null)));
      for (int i = 0; i < 3; i++) {
        join(a.service.select(request("alone", "alone-" + i, 16), true));
      }
      assertEquals(3, requests(a.service, "alone", 701));
      long skipped = (Long) a.sync.json().get("load_steps_not_sent_alone");
      assertTrue(skipped >= 3, "three bookings made alone were not published: " + skipped);
      assertEquals(0, loadStepsOut.get(), "no booking step left a node the cluster lists alone");

      b = SyncTestNode.start(cluster, opts, ROUTER, false);
      SyncTestNode joined = b;
      await().atMost(Duration.ofSeconds(60)).until(() -> a.manager.getNodes().size() == 2);
      await().atMost(CONVERGED).until(() -> requests(joined.service, "alone", 701) == 3);

      join(a.service.select(request("alone", "alone-3", 16), true));
      await().atMost(CONVERGED).until(() -> loadStepsOut.get() >= 1);
      await().atMost(CONVERGED).until(() -> requests(joined.service, "alone", 701) == 4);
      assertEquals(
          skipped,
          (Long) a.sync.json().get("load_steps_not_sent_alone"),
          "with a second member listed every step is published");
      for (int i = 0; i < 4; i++) {
        join(a.service.free("alone-" + i));
      }
      await().atMost(CONVERGED).until(() -> requests(joined.service, "alone", 701) == 0);
    } finally {
      if (b != null) {
        b.close();
      }
      a.close();
    }
  }
}
