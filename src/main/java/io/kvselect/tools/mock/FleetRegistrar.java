package io.kvselect.tools.mock;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.tools.Unreachable;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Registers mock engines with a kvselect (or Dynamo selection-service) node through
 * {@code POST /workers}: endpoint, block size, DP rank range, KV event endpoint per global rank,
 * the replay endpoint when the engine has one rank, capacity, model and routing group. Blocking;
 * call it from a plain thread.
 */
public final class FleetRegistrar {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final URI base;
  private final MockerOptions options;
  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** A registrar for the node at {@code baseUrl} (e.g. {@code http://127.0.0.1:8092}). */
  public FleetRegistrar(String baseUrl, MockerOptions options) {
    String b = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.base = URI.create(b);
    if (base.getScheme() == null || !base.getScheme().startsWith("http")) {
      throw new IllegalArgumentException("--register must be an http(s) base URL: " + baseUrl);
    }
    this.options = options;
  }

  /** The {@code POST /workers} body of engine {@code e}. */
  public Map<String, Object> body(EngineInfo e) {
    Map<String, Object> w = new LinkedHashMap<>();
    w.put("worker_id", e.workerId());
    if (options.modelName() != null) {
      w.put("model_name", options.modelName());
    }
    if (options.routingGroup() != null) {
      w.put("routing_group", options.routingGroup());
    }
    w.put("endpoint", e.endpoint());
    w.put("block_size", e.blockSize());
    w.put("data_parallel_start_rank", 0);
    w.put("data_parallel_size", e.dpSize());
    Map<String, String> events = new LinkedHashMap<>();
    e.kvEventsEndpoints().forEach((r, ep) -> events.put(Integer.toString(r), ep));
    w.put("kv_events_endpoints", events);
    if (e.dpSize() == 1) {
      w.put("kv_events_endpoint", e.kvEventsEndpoint(0));
      if (e.replayEndpoint() != null) {
        w.put("replay_endpoint", e.replayEndpoint());
      }
    }
    w.put("total_kv_blocks", e.numGpuBlocks());
    w.put("admission_endpoint", e.endpoint() + "/admit");
    if (options.maxNumBatchedTokens() != null) {
      w.put("max_num_batched_tokens", options.maxNumBatchedTokens());
    }
    return w;
  }

  /**
   * Registers {@code e}; returns the node's catalog record as JSON text.
   *
   * @throws Unreachable when the node cannot be reached
   * @throws IOException when the node does not answer 201
   */
  public String register(EngineInfo e) throws IOException, InterruptedException {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(base + "/workers"))
            .timeout(Duration.ofSeconds(10))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body(e))))
            .build();
    HttpResponse<String> r;
    try {
      r = client.send(req, HttpResponse.BodyHandlers.ofString());
    } catch (IOException ex) {
      throw new Unreachable("kvselect", base + "/workers", ex);
    }
    if (r.statusCode() != 201) {
      throw new IOException(
          "POST "
              + base
              + "/workers for worker "
              + e.workerId()
              + " answered "
              + r.statusCode()
              + ": "
              + r.body().strip());
    }
    return r.body();
  }

  /**
   * Removes {@code e}'s worker from the node ({@code DELETE /workers/{id}}); true when the node
   * answered 200 or 404 (already gone). Best effort for a stopping fleet: an unreachable node or
   * another answer returns false and is not retried.
   */
  public boolean deregister(EngineInfo e) throws InterruptedException {
    HttpRequest req =
        HttpRequest.newBuilder(URI.create(base + "/workers/" + Long.toUnsignedString(e.workerId())))
            .timeout(Duration.ofSeconds(5))
            .DELETE()
            .build();
    try {
      int status = client.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
      return status == 200 || status == 404;
    } catch (IOException ex) {
      return false;
    }
  }
}
