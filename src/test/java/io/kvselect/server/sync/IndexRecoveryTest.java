package io.kvselect.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.PromptInput;
import io.kvselect.core.service.SelectRequest;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code --indexer-peers}: a starting node replays a peer's {@code /dump} before it serves. */
class IndexRecoveryTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static KvselectNode start(String... flags) throws Exception {
    List<String> args = new java.util.ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0"));
    args.addAll(List.of(flags));
    NodeSettings s = NodeSettings.parse(args.toArray(String[]::new), Map.of());
    return KvselectNode.start(s, 1)
        .toCompletionStage()
        .toCompletableFuture()
        .get(60, TimeUnit.SECONDS);
  }

  private static JsonNode get(KvselectNode n, String path) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    return JSON.readTree(r.body());
  }

  /** A schedulable worker whose event endpoint has no publisher (nothing arrives from it). */
  private static WorkerSpec worker() {
    return WorkerSpec.builder(7)
        .modelName("m")
        .routingGroup("g")
        .endpoint("http://w")
        .kvEventsEndpoint("tcp://127.0.0.1:9")
        .blockSize(4)
        .build();
  }

  @Test
  void aNewNodeRecoversThePeersIndexAcrossTiers() throws Exception {
    KvselectNode a = start();
    KvselectNode b = null;
    try {
      PartitionKey p = new PartitionKey("m", "g");
      a.service().upsertWorker(worker());
      long[] local = {11, 12, 13};
      var index = a.service().eventIndex(p);
      index.store(
          new WorkerRank(7, 0),
          StorageTier.DEVICE,
          false,
          0,
          new long[] {101, 102},
          new long[] {11, 12});
      index.store(
          new WorkerRank(7, 0),
          StorageTier.HOST_PINNED,
          true,
          102,
          new long[] {103},
          new long[] {13});
      assertEquals(3, a.service().inspection().indexSize());

      b = start("--indexer-peers", "http://127.0.0.1:1,http://127.0.0.1:" + a.port());
      JsonNode rec = get(b, "/ready").get("index_recovery");
      assertEquals("done", rec.get("state").asText(), rec.toString());
      assertEquals(3, rec.get("blocks").asLong());
      assertTrue(
          rec.get("peer").asText().endsWith(":" + a.port()), "the failing first peer was skipped");
      b.service().upsertWorker(worker());
      var scores =
          b.service()
              .inspection()
              .overlapScores(SelectRequest.of(p, PromptInput.hashes(local, local, 12)));
      assertEquals(2, scores.workers().get(0).deviceBlocks());
      assertEquals(1, scores.workers().get(0).hostPinnedExtensionBlocks());
      assertEquals(
          get(a, "/dump").get("m:g").get("events").size(),
          get(b, "/dump").get("m:g").get("events").size());
    } finally {
      if (b != null) {
        b.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
      }
      a.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void unreachablePeersAreReportedAndTheNodeStillStarts() throws Exception {
    KvselectNode n = start("--indexer-peers", "http://127.0.0.1:1");
    try {
      JsonNode rec = get(n, "/ready").get("index_recovery");
      assertEquals("failed", rec.get("state").asText());
      assertTrue(rec.get("error").asText().contains("127.0.0.1:1"));
    } finally {
      n.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }
}
