package io.kvselect.server.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Clustered kvselect nodes in this JVM, started through the real path ({@link NodeSettings#parse}
 * then {@link KvselectNode#start(NodeSettings)}) on 127.0.0.1: HTTP on ephemeral ports, members
 * from a free base port, a random cluster name, approximate mode (no KV events needed). Closes
 * every node it started. Owned by the test thread.
 */
final class ClusterHarness implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();
  static final Map<String, String> ENV = Map.of("DYN_ROUTER_USE_KV_EVENTS", "false");

  static {
    // tests only: skip Hazelcast's 5 s pause before joining (not for production, see java_stack.md)
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
  }

  final String name = "kvs-test-" + UUID.randomUUID();
  final int basePort;
  final List<KvselectNode> nodes = new ArrayList<>();
  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  ClusterHarness() throws IOException {
    basePort = Ports.freeRange(3);
  }

  /** The member list naming the first {@code n} member ports. */
  String members(int n) {
    List<String> m = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      m.add("127.0.0.1:" + (basePort + i));
    }
    return String.join(",", m);
  }

  /** Starts one clustered node with the harness's name, members and port plus {@code extra} flags. */
  KvselectNode start(String... extra) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--cluster",
                "--cluster-name",
                name,
                "--cluster-members",
                members(3),
                "--cluster-port",
                Integer.toString(basePort),
                "--session-affinity-ttl-secs",
                "600"));
    args.addAll(List.of(extra));
    return start(NodeSettings.parse(args.toArray(String[]::new), ENV));
  }

  KvselectNode start(NodeSettings s) throws Exception {
    KvselectNode n =
        KvselectNode.start(s).toCompletionStage().toCompletableFuture().get(90, TimeUnit.SECONDS);
    nodes.add(n);
    return n;
  }

  /** Closes one node (it leaves the cluster). */
  void stop(KvselectNode n) throws Exception {
    nodes.remove(n);
    n.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws Exception {
    Exception first = null;
    for (KvselectNode n : List.copyOf(nodes)) {
      try {
        stop(n);
      } catch (Exception e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  record Reply(int status, JsonNode body) {}

  Reply call(KvselectNode n, String method, String path, Object body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.port() + path))
            .timeout(Duration.ofSeconds(30));
    if (body != null) {
      b.header("content-type", "application/json");
      b.method(
          method,
          HttpRequest.BodyPublishers.ofString(
              body instanceof String s ? s : JSON.writeValueAsString(body)));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.body().isEmpty() ? null : JSON.readTree(r.body()));
  }

  Reply get(KvselectNode n, String path) throws Exception {
    return call(n, "GET", path, null);
  }

  Reply post(KvselectNode n, String path, Object body) throws Exception {
    return call(n, "POST", path, body);
  }

  /** Registers workers 1..count on every node (catalog sync is not this suite's subject). */
  void registerWorkers(int count) throws Exception {
    for (KvselectNode n : nodes) {
      for (int w = 1; w <= count; w++) {
        Reply r =
            post(
                n,
                "/workers",
                Map.of(
                    "worker_id", w, "endpoint", "http://worker-" + w + ":8000", "block_size", 16));
        if (r.status() != 201) {
          throw new AssertionError("register worker " + w + ": " + r);
        }
      }
    }
  }
}
