package io.kvselect.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real kvselect node on 127.0.0.1 and an ephemeral port, driven over real HTTP. Settings come
 * from the same flag and environment parsing as {@code bin/kvselect}. Every answer is checked
 * against {@code openapi.json} (status documented, body valid against its schema).
 */
final class NodeHarness implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();

  /** Every answer of every test that drives a node through this harness must match openapi.json. */
  private static final OpenApiDoc CONTRACT = OpenApiDoc.load();

  final KvselectNode node;
  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** A response: status and parsed JSON body (null when the body is not JSON). */
  record Reply(int status, JsonNode body, String raw) {
    String error() {
      return body == null || body.get("error") == null ? null : body.get("error").asText();
    }
  }

  NodeHarness(Map<String, String> env, String... flags) throws Exception {
    List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0"));
    args.addAll(List.of(flags));
    NodeSettings s = NodeSettings.parse(args.toArray(String[]::new), env);
    node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
  }

  /** A node in approximate mode ({@code use_kv_events=false}), as Dynamo's HTTP tests use. */
  static NodeHarness approximate(String... flags) throws Exception {
    return new NodeHarness(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"), flags);
  }

  Reply call(String method, String path, String body, String contentType) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
            .timeout(Duration.ofSeconds(20));
    if (contentType != null) {
      b.header("content-type", contentType);
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    JsonNode n = null;
    try {
      n = r.body().isEmpty() ? null : JSON.readTree(r.body());
    } catch (Exception ignored) {
      n = null;
    }
    CONTRACT.checkAnswer(
        method,
        path,
        r.statusCode(),
        r.headers().firstValue("content-type").orElse(null),
        r.body());
    return new Reply(r.statusCode(), n, r.body());
  }

  Reply get(String path) throws Exception {
    return call("GET", path, null, null);
  }

  Reply post(String path, String json) throws Exception {
    return call("POST", path, json, "application/json");
  }

  Reply post(String path, Object body) throws Exception {
    return post(path, JSON.writeValueAsString(body));
  }

  Reply patch(String path, Object body) throws Exception {
    return call("PATCH", path, JSON.writeValueAsString(body), "application/json");
  }

  Reply delete(String path) throws Exception {
    return call("DELETE", path, null, null);
  }

  /** Registers a schedulable worker with block size 4 (and an events endpoint per rank). */
  Reply worker(long id, Object... extra) throws Exception {
    java.util.LinkedHashMap<String, Object> w = new java.util.LinkedHashMap<>();
    w.put("worker_id", id);
    w.put("endpoint", "http://worker-" + id + ":8000");
    w.put("block_size", 4);
    w.put("kv_events_endpoint", "tcp://127.0.0.1:1" + id);
    for (int i = 0; i + 1 < extra.length; i += 2) {
      w.put((String) extra[i], extra[i + 1]);
    }
    return post("/workers", w);
  }

  /** The single load row of (worker, rank) in the default partition. */
  JsonNode load(long workerId, int dpRank) throws Exception {
    for (JsonNode part : get("/loads").body()) {
      for (JsonNode l : part.get("loads")) {
        if (l.get("worker_id").asLong() == workerId && l.get("dp_rank").asInt() == dpRank) {
          return l;
        }
      }
    }
    throw new AssertionError("no load row for " + workerId + ":" + dpRank);
  }

  @Override
  public void close() throws Exception {
    node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
