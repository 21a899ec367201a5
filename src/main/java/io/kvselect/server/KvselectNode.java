package io.kvselect.server;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.service.SelectionService;
import io.kvselect.core.service.ServiceSettings;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.metrics.ServiceMetrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.time.Duration;
import java.util.EnumSet;

/**
 * A running kvselect node: its Vert.x instance, selection service and HTTP server. Used by the
 * launcher and by tests (with port 0).
 */
public final class KvselectNode {

  private final Vertx vertx;
  private final SelectionService service;
  private final MainVerticle main;

  private KvselectNode(Vertx vertx, SelectionService service, MainVerticle main) {
    this.vertx = vertx;
    this.service = service;
    this.main = main;
  }

  /**
   * Builds the service described by {@code s}. Every partition's event index is a
   * {@link ShardedBlockIndex} of {@code threads} shards (one with {@code --threads 1}): the
   * KV-event threads write it while selections read it, so even a single shard sits behind its
   * lock.
   */
  public static SelectionService service(NodeSettings s) {
    ServiceSettings settings = new ServiceSettings(
        s.router(),
        s.sessionAffinityTtlSecs() == null ? null : Duration.ofSeconds(s.sessionAffinityTtlSecs()),
        Duration.ofNanos((long) (s.selectionCacheTtlSecs() * 1e9)),
        s.selectionCacheMaxEntries(),
        s.selectionCacheMaxBytes(),
        () -> new ShardedBlockIndex(Math.max(1, s.threads()), PrefixChainIndex::new));
    return SelectionService.builder().settings(settings)
        .queue(queueConfig(s.router()), Duration.ofNanos((long) (s.routerQueueTimeoutSecs() * 1e9)))
        .admissionClient(new io.kvselect.server.kvc.HttpAdmissionClient(
            io.kvselect.server.kvc.HttpAdmissionClient.DEFAULT_TIMEOUT))
        .build();
  }

  /**
   * The router queue's classes and ISL tiers from {@code router_policy_config}: a YAML file when
   * the value names one, else the YAML text itself; absent means one class with
   * {@code router_queue_policy}. A bad document stops the node with a message naming the field.
   */
  static QueueConfig queueConfig(RouterConfig router) {
    String v = router.policyConfig();
    if (v == null || v.isBlank()) {
      return QueueConfig.defaults(router.queuePolicy());
    }
    try {
      java.nio.file.Path path = java.nio.file.Path.of(v);
      String yaml = java.nio.file.Files.isRegularFile(path) ? java.nio.file.Files.readString(path) : v;
      return QueueConfig.parse(yaml, router.queuePolicy());
    } catch (java.io.IOException | java.nio.file.InvalidPathException e) {
      throw new io.kvselect.server.config.CliException("router_policy_config: cannot read " + v + ": " + e.getMessage());
    } catch (io.kvselect.core.config.ConfigException e) {
      throw new io.kvselect.server.config.CliException("router_policy_config: " + e.getMessage());
    }
  }

  /** Starts a standalone (non-clustered) node. */
  public static Future<KvselectNode> start(NodeSettings s) {
    return start(s, service(s), Math.max(1, Runtime.getRuntime().availableProcessors()));
  }

  /** Starts a node over an existing service with {@code httpInstances} HTTP verticles. */
  public static Future<KvselectNode> start(NodeSettings s, SelectionService service, int httpInstances) {
    ServiceMetrics metrics = new ServiceMetrics();
    VertxOptions options = new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions()
        .setEnabled(true).setJvmMetricsEnabled(true)
        // the pool labels tell the worker pool from the internal blocking pool: without them both
        // map to one meter id and the second registration is refused with a warning
        .setLabels(EnumSet.of(Label.HTTP_METHOD, Label.HTTP_CODE, Label.HTTP_ROUTE, Label.POOL_TYPE, Label.POOL_NAME)));
    Vertx vertx = Vertx.builder().with(options).withMetrics(new MicrometerMetricsFactory(metrics.registry())).build();
    MainVerticle main = new MainVerticle(service, metrics, s.host(), s.port(), httpInstances, s.threads(),
        s.indexerPeers(), s.configJson());
    // not bound to a context: chaining the failure after vertx.close() would dispatch it onto the
    // closed event loop, where it is rejected and the caller waits forever
    Promise<KvselectNode> result = Promise.promise();
    vertx.deployVerticle(main).onComplete(ar -> {
      if (ar.succeeded()) {
        result.complete(new KvselectNode(vertx, service, main));
      } else {
        service.shutdown();
        result.fail(ar.cause());
        vertx.close();
      }
    });
    return result.future();
  }

  public int port() {
    return main.port();
  }

  /** KV-event ingestion of this node, or null in approximate mode. */
  public io.kvselect.server.events.KvEventsCoordinator events() {
    return main.events();
  }

  public SelectionService service() {
    return service;
  }

  public Vertx vertx() {
    return vertx;
  }

  public Future<Void> close() {
    service.shutdown();
    return vertx.close();
  }
}
