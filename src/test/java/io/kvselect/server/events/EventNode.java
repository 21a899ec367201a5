package io.kvselect.server.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.tools.mock.KvEventEncoder;
import io.kvselect.tools.mock.WireFormat;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real node on 127.0.0.1 (ephemeral port, event-driven index, block size {@value #BS} for the
 * helpers) and a plain HTTP client, for the KV-event tests that drive it as engines and clients
 * would. Owned by the test thread; the HTTP client is thread-safe.
 */
final class EventNode implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();
  static final int BS = 4;

  final KvselectNode node;
  private final HttpClient http = HttpClient.newHttpClient();

  private EventNode(KvselectNode node) {
    this.node = node;
  }

  /** A node with {@code --threads threads} over its own service. */
  static EventNode start(int threads) throws Exception {
    return new EventNode(
        KvselectNode.start(settings(threads), 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS));
  }

  /** A node with {@code --threads threads} over {@code service}. */
  static EventNode start(int threads, SelectionService service) throws Exception {
    return start(settings(threads), io.kvselect.server.NodeParts.of(service));
  }

  private static EventNode start(NodeSettings s, io.kvselect.server.NodeParts parts)
      throws Exception {
    return new EventNode(
        KvselectNode.start(s, parts, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS));
  }

  private static NodeSettings settings(int threads) {
    return NodeSettings.parse(
        new String[] {"--host", "127.0.0.1", "--port", "0", "--threads", Integer.toString(threads)},
        Map.of());
  }

  HttpResponse<String> send(String method, String path, Object body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path));
    if (body instanceof String raw) {
      b.header("content-type", "application/json");
      b.method(method, HttpRequest.BodyPublishers.ofString(raw));
    } else if (body != null) {
      b.header("content-type", "application/json");
      b.method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The JSON answer of a request that must succeed. */
  JsonNode json(String method, String path, Object body) throws Exception {
    HttpResponse<String> r = send(method, path, body);
    if (r.statusCode() >= 300) {
      throw new AssertionError(method + " " + path + " -> " + r.statusCode() + " " + r.body());
    }
    return JSON.readTree(r.body());
  }

  /** Device depth per {@code "worker:rank"} that {@code /overlap_scores} reports for a prompt. */
  Map<String, Integer> depths(int[] prompt) throws Exception {
    Map<String, Integer> out = new LinkedHashMap<>();
    for (JsonNode w : json("POST", "/overlap_scores", Map.of("token_ids", prompt)).get("workers")) {
      out.put(
          w.get("worker_id").asLong() + ":" + w.get("dp_rank").asInt(),
          w.get("device_blocks").asInt());
    }
    return out;
  }

  /** One rank's {@code kv_events} entry in {@code GET /workers}, or null. */
  JsonNode listener(long worker, int rank) throws Exception {
    for (JsonNode w : json("GET", "/workers", null)) {
      if (w.get("worker_id").asLong() == worker) {
        JsonNode kv = w.get("kv_events");
        return kv == null ? null : kv.get(Integer.toString(rank));
      }
    }
    return null;
  }

  static int[] tokens(int from, int count) {
    int[] t = new int[count];
    for (int i = 0; i < count; i++) {
      t[i] = from + i;
    }
    return t;
  }

  /** The router's (and the mock engines') block hashes of {@code tokens}. */
  static long[] chain(int[] tokens) {
    return BlockHasher.sequenceHashes(
        BlockHasher.localBlockHashes(
            tokens, tokens.length, BS, BlockHasher.saltSeed(null, null), false, null));
  }

  /** A BlockStored of blocks {@code [from, to)} of {@code tokens}, extending block {@code from - 1}. */
  static BlockStored stored(int[] tokens, int from, int to) {
    long[] c = chain(tokens);
    return new BlockStored(
        Arrays.copyOfRange(c, from, to),
        from > 0,
        from > 0 ? c[from - 1] : 0,
        Arrays.copyOfRange(tokens, from * BS, to * BS),
        BS,
        "GPU",
        null,
        null,
        null,
        null,
        null,
        null);
  }

  /** A msgpack batch stamped with {@code dpRank} (null: unstamped). */
  static byte[] batch(Integer dpRank, KvEvent... events) {
    return KvEventEncoder.encode(new KvEventBatch(1.0, List.of(events), dpRank), WireFormat.MAP);
  }

  @Override
  public void close() throws Exception {
    node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
