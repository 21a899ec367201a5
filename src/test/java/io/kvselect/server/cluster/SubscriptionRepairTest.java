package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.testing.Ports;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A member whose event-bus registrations were removed from the cluster's subscription map (what a
 * late {@code cleanSubs} of vertx-hazelcast does to a member that merged back) stays unreachable
 * on its own, and {@link SubscriptionRepair} makes it reachable again. Two clustered Vert.x
 * instances in this JVM, loopback, a random cluster name.
 */
class SubscriptionRepairTest {

  private static final String ADDRESS = "kvselect.test.repair";

  /** "pong", or the failure kind of the request. */
  private static String ping(Vertx from) throws Exception {
    try {
      return (String)
          from.eventBus()
              .request(ADDRESS, "ping", new DeliveryOptions().setSendTimeout(2_000))
              .toCompletionStage()
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS)
              .body();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ReplyException r) {
        return r.failureType().name();
      }
      throw e;
    }
  }

  @Test
  void registrationsRemovedFromTheSubscriptionMapComeBackWithTheRepair() throws Exception {
    String cluster = "kvs-test-" + UUID.randomUUID();
    int port = Ports.free();
    HazelcastClusterManager aMgr =
        new HazelcastClusterManager(
            ApplicationCluster.hazelcast(cluster, port, "127.0.0.1:" + port));
    Vertx a = ApplicationCluster.vertx(aMgr);
    try {
      HazelcastClusterManager bMgr =
          new HazelcastClusterManager(ApplicationCluster.joining(cluster, aMgr));
      Vertx b = ApplicationCluster.vertx(bMgr);
      try {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> aMgr.getNodes().size() == 2 && bMgr.getNodes().size() == 2);
        MessageConsumer<String> c = b.eventBus().consumer(ADDRESS, m -> m.reply("pong"));
        c.completion().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(20)).until(() -> "pong".equals(ping(a)));

        // what a late cleanSubs does: B's registration leaves the shared map while B stays a member
        aMgr.getHazelcastInstance().getMultiMap("__vertx.subs").remove(ADDRESS);
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> ReplyFailure.NO_HANDLERS.name().equals(ping(a)));
        for (int i = 0; i < 5; i++) {
          assertEquals(
              ReplyFailure.NO_HANDLERS.name(), ping(a), "nothing in Vert.x puts it back by itself");
        }

        SubscriptionRepair repair = SubscriptionRepair.of(b, bMgr).orElseThrow();
        repair.republishNow();
        await().atMost(Duration.ofSeconds(20)).until(() -> "pong".equals(ping(a)));
        assertTrue(repair.republished() >= 1);
      } finally {
        b.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    } finally {
      a.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
