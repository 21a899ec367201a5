package io.kvselect.server.events;

import static io.kvselect.server.events.EventNode.batch;
import static io.kvselect.server.events.EventNode.stored;
import static io.kvselect.server.events.EventNode.tokens;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.deployment.DeploymentContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * KV-event ingestion hands the index shards their writes over the event bus: a batch published
 * by an engine's ZMQ PUB is read and decoded by the rank's poller, sent in a round to
 * {@code kvselect.index.shard.<s>} (seen here by an outbound interceptor on the node's bus), and
 * applied by that shard's verticle, after which a selection reads the blocks. Deleting the worker
 * sends its removal the same way and answers once the shard has applied it.
 */
class IndexShardHandOffTest {

  private static final int POLLERS = 2;

  @Test
  void aPublishedBatchTravelsFromThePollerOverTheShardAddressIntoTheIndex() throws Exception {
    List<String> rounds = new CopyOnWriteArrayList<>();
    try (EventNode node = EventNode.start(POLLERS);
        KvEventPublisher engine =
            new KvEventPublisher(
                "engine-1", "127.0.0.1", new int[1], null, "", ReplayLayout.TOPIC)) {
      VertxInternal vertx = (VertxInternal) node.node.vertx();
      List<String> verticles = new ArrayList<>();
      for (DeploymentContext d : vertx.deploymentManager().deployments()) {
        d.deployment()
            .instances()
            .forEach(
                v ->
                    verticles.add(
                        v instanceof IndexShardVerticle s
                            ? "IndexShardVerticle " + s.shard()
                            : v.getClass().getSimpleName()));
      }
      verticles.sort(null);
      assertEquals(
          List.of(
              "EventBusApi",
              "HttpApiVerticle",
              "IndexShardVerticle 0",
              "IndexShardVerticle 1",
              "KvEventIngestVerticle",
              "MainVerticle"),
          verticles,
          "one indexing-shard verticle per poller");
      vertx
          .eventBus()
          .addOutboundInterceptor(
              ctx -> {
                if (ctx.message().address().startsWith(LocalAddresses.INDEX_SHARD_PREFIX)
                    && ctx.body() instanceof ShardCommand.Round r) {
                  for (ShardCommand c : r.commands()) {
                    rounds.add(ctx.message().address() + " " + c.getClass().getSimpleName());
                  }
                }
                ctx.next();
              });

      String endpoint = engine.ready().get(10, TimeUnit.SECONDS).publishers().get(0);
      node.json(
          "POST",
          "/workers",
          Map.of(
              "worker_id",
              1,
              "endpoint",
              "http://127.0.0.1:1",
              "block_size",
              EventNode.BS,
              "kv_events_endpoint",
              endpoint));
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(25))
          .until(
              () -> {
                engine.publish(0, batch(0, new BlockRemoved(new long[] {42}, "GPU", null, null)));
                var l = node.listener(1, 0);
                return l != null && l.get("batches").asLong() > 0;
              });
      int[] prompt = tokens(10, 12);
      engine.publish(0, batch(0, stored(prompt, 0, 3)));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> node.depths(prompt).getOrDefault("1:0", 0) == 3);

      int shard = ShardedBlockIndex.shardOf(new WorkerRank(1, 0), POLLERS);
      String address = LocalAddresses.indexShard(shard);
      assertTrue(
          rounds.contains(address + " Apply"), "the batches went to " + address + ": " + rounds);
      assertTrue(
          rounds.stream().allMatch(r -> r.startsWith(address + " ")),
          "only the rank's shard: " + rounds);

      io.kvselect.core.index.BlockIndex index =
          node.node.service().eventIndex(new io.kvselect.core.catalog.PartitionKey(null, null));
      assertEquals(3, index.size());
      assertEquals(200, node.send("DELETE", "/workers/1", null).statusCode());
      assertEquals(0, index.size(), "answered once the shard applied the removal");
      assertTrue(
          rounds.contains(address + " RemoveRank"), "the removal went the same way: " + rounds);
      assertTrue(
          rounds.contains(address + " Barrier"), "and the delete waited for the shard: " + rounds);
    }
  }
}
