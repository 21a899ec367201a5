package io.kvselect.server.cluster;

import com.hazelcast.config.Config;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.core.service.SelectionService;
import io.kvselect.core.service.SelectionServiceBuilder;
import io.kvselect.server.MainVerticle;
import io.kvselect.server.NodeParts;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.metrics.ServiceMetrics;
import io.kvselect.server.security.HttpGuards;
import io.kvselect.testing.Ports;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * One clustered node for the sync tests: a clustered Vert.x with the Hazelcast manager configured
 * from {@code cluster.xml} (TCP-IP join on loopback, multicast and auto-detection off,
 * phone-home off) under a random cluster name and port range, a selection service wired to a
 * {@link PeerSync}, and optionally the node's main verticle (HTTP, KV-event ingestion). Owned by
 * the test thread.
 */
final class SyncTestNode implements AutoCloseable {

  /** Member addresses of a test cluster: the base port and the next ones. */
  private static final int MEMBERS = 5;

  /** A cluster name and Hazelcast port range shared by the nodes of one test. */
  record Cluster(String name, int basePort) {
    static Cluster random() {
      try {
        return new Cluster("kvs-test-" + UUID.randomUUID(), Ports.freeRange(MEMBERS));
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  final Vertx vertx;
  final HazelcastClusterManager manager;
  final PeerSync sync;
  final SelectionService service;
  final MainVerticle main;

  private SyncTestNode(
      Vertx vertx,
      HazelcastClusterManager manager,
      PeerSync sync,
      SelectionService service,
      MainVerticle main) {
    this.vertx = vertx;
    this.manager = manager;
    this.sync = sync;
    this.service = service;
    this.main = main;
  }

  /** The node's Hazelcast configuration: {@code cluster.xml} with the test cluster's settings applied. */
  static Config hazelcast(Cluster c) {
    List<String> members = new ArrayList<>();
    for (int i = 0; i < MEMBERS; i++) {
      members.add("127.0.0.1:" + (c.basePort() + i));
    }
    Config cfg =
        ClusterBootstrap.config(
            new ClusterSettings(true, c.name(), members, c.basePort(), "127.0.0.1"), 4096);
    cfg.setProperty("hazelcast.wait.seconds.before.join", "0");
    return cfg;
  }

  /** Router config with the given environment knobs (KV events on unless a knob says otherwise). */
  static RouterConfig router(String... env) {
    Map<String, String> m = new java.util.HashMap<>();
    for (int i = 0; i < env.length; i += 2) {
      m.put(env[i], env[i + 1]);
    }
    return RouterConfigLoader.fromEnv(RouterConfig.DEFAULTS, m);
  }

  /**
   * Starts a node: clustered Vert.x, service built with the sync's seams, the main verticle when
   * {@code withMain}, then {@link PeerSync#attach}.
   */
  static SyncTestNode start(
      Cluster c, PeerSyncOptions options, RouterConfig router, boolean withMain) throws Exception {
    return start(c, options, router, withMain, m -> m);
  }

  /**
   * As {@link #start(Cluster, PeerSyncOptions, RouterConfig, boolean)}, with the sync seeing the
   * cluster manager through {@code view} (a test may hide members from it).
   */
  static SyncTestNode start(
      Cluster c,
      PeerSyncOptions options,
      RouterConfig router,
      boolean withMain,
      java.util.function.UnaryOperator<io.vertx.core.spi.cluster.ClusterManager> view)
      throws Exception {
    HazelcastClusterManager mgr = new HazelcastClusterManager(hazelcast(c));
    VertxOptions o = new VertxOptions();
    o.getEventBusOptions().setHost("127.0.0.1").setPort(0);
    Vertx vx = await(Vertx.builder().with(o).withClusterManager(mgr).buildClustered());
    try {
      PeerSync sync = new PeerSync(vx, view.apply(mgr), options);
      SelectionServiceBuilder b =
          SelectionService.builder()
              .routerConfig(router)
              .queue(QueueConfig.defaults(router.queue().policy()), Duration.ofMinutes(2))
              .loadSync(sync.loadSync())
              .catalogSync(sync.catalogSync());
      SelectionService svc = b.build();
      MainVerticle main = null;
      if (withMain) {
        NodeSettings s =
            NodeSettings.parse(
                new String[] {"--host", "127.0.0.1", "--port", "0", "--threads", "1"}, Map.of());
        main =
            new MainVerticle(
                s,
                NodeParts.of(svc),
                new ServiceMetrics(),
                1,
                HttpGuards.NONE,
                ClusterView.standalone());
        await(vx.deployVerticle(main));
      }
      await(sync.attach(svc, main == null ? null : main.events()));
      return new SyncTestNode(vx, mgr, sync, svc, main);
    } catch (Exception e) {
      vx.close();
      throw e;
    }
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  String id() {
    return sync.nodeId();
  }

  @Override
  public void close() throws Exception {
    try {
      await(sync.close());
    } finally {
      await(vertx.close());
    }
  }
}
