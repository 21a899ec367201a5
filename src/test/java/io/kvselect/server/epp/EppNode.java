package io.kvselect.server.epp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
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
 * A real node with the endpoint picker on ephemeral ports (HTTP and gRPC on 127.0.0.1), in
 * approximate mode unless the environment says otherwise, and a plaintext gRPC channel to its
 * picker. Workers are registered over HTTP, loads read from {@code /loads}.
 */
final class EppNode implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();
  final KvselectNode node;
  final ManagedChannel channel;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  EppNode(Map<String, String> env, String... flags) throws Exception {
    List<String> args =
        new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0", "--epp-port", "0"));
    args.addAll(List.of(flags));
    Map<String, String> e = new java.util.HashMap<>(Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    e.putAll(env);
    node =
        KvselectNode.start(NodeSettings.parse(args.toArray(String[]::new), e), 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    channel = NettyChannelBuilder.forAddress("127.0.0.1", node.eppPort()).usePlaintext().build();
  }

  EnvoyStream stream() {
    return new EnvoyStream(channel);
  }

  /** Registers worker {@code id} of {@code model} at {@code endpoint} (block size 4). */
  void worker(long id, String model, String endpoint, String... extra) throws Exception {
    StringBuilder b =
        new StringBuilder(
            "{\"worker_id\":"
                + id
                + ",\"model_name\":\""
                + model
                + "\",\"endpoint\":\""
                + endpoint
                + "\",\"block_size\":4,\"kv_events_endpoint\":\"tcp://127.0.0.1:1"
                + id
                + "\"");
    for (String x : extra) {
      b.append(',').append(x);
    }
    HttpResponse<String> r = http("POST", "/workers", b.append('}').toString());
    assertEquals(201, r.statusCode(), r.body());
  }

  HttpResponse<String> http(String method, String path, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
            .timeout(Duration.ofSeconds(20))
            .header("content-type", "application/json");
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The load row of {@code workerId} (rank 0) in {@code model}'s default partition, or null. */
  JsonNode load(String model, long workerId) throws Exception {
    for (JsonNode part : JSON.readTree(http("GET", "/loads", null).body())) {
      if (!part.get("model_name").asText().equals(model)) {
        continue;
      }
      for (JsonNode l : part.get("loads")) {
        if (l.get("worker_id").asLong() == workerId && l.get("dp_rank").asInt() == 0) {
          return l;
        }
      }
    }
    return null;
  }

  /** Active requests of {@code workerId} in {@code model}'s default partition. */
  int active(String model, long workerId) throws Exception {
    JsonNode l = load(model, workerId);
    return l == null ? 0 : l.get("active_requests").asInt();
  }

  @Override
  public void close() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
