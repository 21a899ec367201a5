package io.kvselect.server.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.hazelcast.config.Config;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MultiMapConfig;
import com.hazelcast.config.NetworkConfig;
import io.kvselect.server.bus.Kvselect;
import io.kvselect.testing.Ports;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A clustered Vert.x of an application that embeds kvselect, as tests build it: its own
 * programmatic Hazelcast configuration (not kvselect's {@code cluster.xml}), loopback only, TCP
 * join, ephemeral event-bus port.
 */
public final class ApplicationCluster {

  private ApplicationCluster() {}

  /** A loopback-only Hazelcast member of {@code cluster} on {@code port}, joining {@code member} by TCP. */
  public static Config hazelcast(String cluster, int port, String member) {
    Config c = new Config();
    c.setClusterName(cluster);
    c.setProperty("hazelcast.phone.home.enabled", "false");
    c.setProperty("hazelcast.socket.bind.any", "false");
    c.setProperty("hazelcast.logging.type", "slf4j");
    c.setProperty("hazelcast.wait.seconds.before.join", "0");
    NetworkConfig n = c.getNetworkConfig();
    n.setPort(port).setPortAutoIncrement(true).setPortCount(20);
    n.getJoin().getMulticastConfig().setEnabled(false);
    n.getJoin().getAutoDetectionConfig().setEnabled(false);
    n.getJoin().getTcpIpConfig().setEnabled(true).addMember(member);
    n.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    // the structures Vert.x needs, as vertx-hazelcast's default-cluster.xml declares them
    c.addMultiMapConfig(
        new MultiMapConfig("__vertx.subs")
            .setBackupCount(1)
            .setValueCollectionType(MultiMapConfig.ValueCollectionType.SET));
    c.addMapConfig(new MapConfig("__vertx.haInfo").setBackupCount(1));
    c.addMapConfig(new MapConfig("__vertx.nodeInfo").setBackupCount(1));
    return c;
  }

  /** A member of {@code cluster} on a free port that joins {@code first} at the member port it bound. */
  public static Config joining(String cluster, HazelcastClusterManager first)
      throws java.io.IOException {
    int actual = first.getHazelcastInstance().getCluster().getLocalMember().getAddress().getPort();
    return hazelcast(cluster, Ports.free(), "127.0.0.1:" + actual);
  }

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** An HTTP answer: its status and its JSON body (null when empty). */
  public record Reply(int status, JsonNode body) {}

  /** {@code method path} on an embedded kvselect's HTTP port, {@code body} sent as JSON when set. */
  public static Reply call(Kvselect k, String method, String path, Object body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + k.httpPort() + path))
            .timeout(Duration.ofSeconds(30));
    if (body == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("content-type", "application/json")
          .method(
              method,
              HttpRequest.BodyPublishers.ofString(ClusterHarness.JSON.writeValueAsString(body)));
    }
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Reply(
        r.statusCode(), r.body().isEmpty() ? null : ClusterHarness.JSON.readTree(r.body()));
  }

  /** A clustered Vert.x over {@code mgr}, its event bus on 127.0.0.1 and an ephemeral port. */
  public static Vertx vertx(HazelcastClusterManager mgr) throws Exception {
    VertxOptions o = new VertxOptions();
    o.getEventBusOptions().setHost("127.0.0.1").setPort(0);
    return Vertx.builder()
        .with(o)
        .withClusterManager(mgr)
        .buildClustered()
        .toCompletionStage()
        .toCompletableFuture()
        .get(60, TimeUnit.SECONDS);
  }
}
