package io.kvselect.server;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.service.SelectionService;
import io.kvselect.core.service.ServiceSettings;
import io.kvselect.server.cluster.ClusterBootstrap;
import io.kvselect.server.cluster.ClusterSeams;
import io.kvselect.server.cluster.ClusterView;
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

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KvselectNode.class);

  private final Vertx vertx;
  private final SelectionService service;
  private final MainVerticle main;
  /** Counts in-flight HTTP requests for {@link #drain}; shared by the HTTP verticles. */
  private final io.kvselect.server.drain.RequestGate gate;
  /** The first {@link #drain} call's outcome; later calls return it. */
  private final java.util.concurrent.atomic.AtomicReference<Future<Void>> drained =
      new java.util.concurrent.atomic.AtomicReference<>();
  private final ClusterView cluster;
  private volatile io.kvselect.server.cluster.PeerSync peerSync;
  private volatile io.kvselect.server.sync.replica.ReplicaSync replicaSync;

  private KvselectNode(Vertx vertx, SelectionService service, MainVerticle main,
      io.kvselect.server.drain.RequestGate gate, ClusterView cluster) {
    this.vertx = vertx;
    this.service = service;
    this.main = main;
    this.gate = gate;
    this.cluster = cluster;
  }

  /**
   * Builds the service described by {@code s}. Every partition's event index is a
   * {@link ShardedBlockIndex} of {@code threads} shards (one with {@code --threads 1}): the
   * KV-event threads write it while selections read it, so even a single shard sits behind its
   * lock.
   */
  public static SelectionService service(NodeSettings s) {
    io.kvselect.server.sync.replica.ReplicaSync replica = replicaSync(s);
    if (replica == null) {
      return builder(s).build();
    }
    io.kvselect.core.service.SelectionServiceBuilder b = builder(s).loadSync(replica.loadSync());
    if (s.sessionAffinityTtlSecs() != null) {
      Duration ttl = Duration.ofSeconds(s.sessionAffinityTtlSecs());
      b.sessionAffinity(clock -> replica.affinity(new io.kvselect.core.session.LocalSessionAffinity(clock, ttl)));
    }
    SelectionService service = b.build();
    io.kvselect.server.sync.replica.ReplicaSync.register(service, replica);
    return service;
  }

  /**
   * The service and node-to-node sync of a clustered node over {@code hz}, with Dynamo's replica
   * sync built (not started) and registered for the service when {@code --replica-sync-port} is
   * set: the one clustered assembly {@code bin/kvselect} and {@code Kvselect.deploy} share.
   */
  public static ClusterSeams.Node clusteredNode(NodeSettings s, io.vertx.core.Vertx vertx,
      com.hazelcast.core.HazelcastInstance hz) {
    io.kvselect.server.sync.replica.ReplicaSync replica = replicaSync(s);
    ClusterSeams.Node built = ClusterSeams.build(builder(s), s, vertx, hz, replica == null ? null : replica.loadSync());
    if (replica != null) {
      io.kvselect.server.sync.replica.ReplicaSync.register(built.service(), replica);
    }
    return built;
  }

  /** Dynamo's replica sync when {@code --replica-sync-port} is set, else null (not started). */
  private static io.kvselect.server.sync.replica.ReplicaSync replicaSync(NodeSettings s) {
    return s.replicaSyncPort() == null ? null : new io.kvselect.server.sync.replica.ReplicaSync(
        s.replicaSyncPort(), s.host(), s.replicaSyncPeers(), s.sessionAffinityTtlSecs() != null);
  }

  /** The builder {@link #service} uses; a clustered node adds its shared seams to it. */
  public static io.kvselect.core.service.SelectionServiceBuilder builder(NodeSettings s) {
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
            io.kvselect.server.kvc.HttpAdmissionClient.DEFAULT_TIMEOUT));
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

  /**
   * Starts a node: clustered when {@code s.cluster().enabled()} (a Hazelcast-clustered Vert.x whose
   * session table and pending selections are shared by the cluster), else standalone, with no
   * Hazelcast at all.
   */
  public static Future<KvselectNode> start(NodeSettings s) {
    int httpInstances = Math.max(1, Runtime.getRuntime().availableProcessors());
    if (s.cluster().enabled()) {
      return startClustered(s, httpInstances);
    }
    return start(s, service(s), httpInstances);
  }

  /** Starts a standalone node over an existing service with {@code httpInstances} HTTP verticles. */
  public static Future<KvselectNode> start(NodeSettings s, SelectionService service, int httpInstances) {
    ServiceMetrics metrics = new ServiceMetrics();
    Vertx vertx = Vertx.builder().with(vertxOptions()).withMetrics(new MicrometerMetricsFactory(metrics.registry()))
        .build();
    return deploy(vertx, s, service, httpInstances, metrics, ClusterView.standalone());
  }

  private static VertxOptions vertxOptions() {
    return new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions()
        .setEnabled(true).setJvmMetricsEnabled(true)
        // the pool labels tell the worker pool from the internal blocking pool: without them both
        // map to one meter id and the second registration is refused with a warning
        .setLabels(EnumSet.of(Label.HTTP_METHOD, Label.HTTP_CODE, Label.HTTP_ROUTE, Label.POOL_TYPE, Label.POOL_NAME)));
  }

  /**
   * The clustered start: joins (or forms) the cluster, then builds the service with the
   * Hazelcast session table and pending store ({@link ClusterSeams}) and deploys as usual.
   */
  private static Future<KvselectNode> startClustered(NodeSettings s, int httpInstances) {
    ServiceMetrics metrics = new ServiceMetrics();
    return ClusterBootstrap.start(vertxOptions(), new MicrometerMetricsFactory(metrics.registry()), s.cluster(),
        s.selectionCacheMaxEntries()).compose(c -> {
          SelectionService service;
          io.kvselect.server.cluster.PeerSync sync;
          try {
            ClusterSeams.Node built = clusteredNode(s, c.vertx(), c.hazelcast());
            service = built.service();
            sync = built.sync();
          } catch (RuntimeException e) {
            return c.vertx().close().transform(x -> Future.<KvselectNode>failedFuture(e));
          }
          // load, catalog and index from the peers once the KV-event coordinator follows the catalog;
          // /ready answers 503 until then
          c.view().holdReady(io.kvselect.server.cluster.PeerSync.RECOVERING);
          if (service.sessionAffinity() instanceof io.kvselect.core.session.BudgetedSessionAffinity b) {
            c.view().attachFallbacks(b::stats, b.budget());
            metrics.bindFallbacks(b);
          }
          if (service.kvcState() instanceof io.kvselect.core.kvc.BudgetedKvcState k) {
            metrics.bindKvcFallbacks(k);
            c.view().attachKvcFallbacks(k);
          }
          metrics.bindCluster(sync, () -> c.hazelcast().getLifecycleService().isRunning()
              ? c.hazelcast().getCluster().getMembers().size() : 0);
          return deploy(c.vertx(), s, service, httpInstances, metrics, c.view())
              .compose(node -> sync.attach(service, node.events()).map(o -> node.withPeerSync(sync))
                  .recover(e -> node.close().transform(x -> Future.<KvselectNode>failedFuture(e))));
        });
  }

  private static Future<KvselectNode> deploy(Vertx vertx, NodeSettings s, SelectionService service,
      int httpInstances, ServiceMetrics metrics, ClusterView cluster) {
    io.kvselect.server.drain.RequestGate gate = new io.kvselect.server.drain.RequestGate();
    MainVerticle main = new MainVerticle(service, metrics, s.host(), s.port(), httpInstances, s.threads(),
        s.indexerPeers(), s.configJson(), io.kvselect.server.security.HttpGuards.of(s.operations(), gate), cluster);
    io.kvselect.server.sync.replica.ReplicaSync replica = io.kvselect.server.sync.replica.ReplicaSync.claim(service);
    main.replicaSync(replica);
    // not bound to a context: chaining the failure after vertx.close() would dispatch it onto the
    // closed event loop, where it is rejected and the caller waits forever
    Promise<KvselectNode> result = Promise.promise();
    Future<Void> replicaBound = replica == null ? Future.succeededFuture()
        : Future.fromCompletionStage(replica.start(service));
    Future<Void> deployed = replicaBound.compose(v -> vertx.deployVerticle(main))
        .compose(id -> Operations.deploy(vertx, s.operations(), service, main.events()));
    deployed.onComplete(ar -> {
      if (ar.succeeded()) {
        io.kvselect.server.security.Exposure.warning(s.host(), s.operations().authEnabled()).ifPresent(LOG::warn);
        result.complete(new KvselectNode(vertx, service, main, gate, cluster).withReplicaSync(replica));
      } else {
        service.shutdown();
        if (replica != null) {
          replica.stop();
        }
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

  /**
   * Graceful drain (what SIGTERM runs): {@code /ready} answers 503 and new selections 503 at once,
   * requests waiting in a router queue are answered 503 (their callers retry on another node now
   * rather than wait for capacity on a node that is leaving), every other in-flight request is
   * answered, then the node closes (HTTP servers, KV-event listeners, timers). Bounded by {@code
   * timeout}: requests still in flight then are cut off with the connections. Idempotent.
   */
  public Future<Void> drain(Duration timeout) {
    Promise<Void> done = Promise.promise();
    if (!drained.compareAndSet(null, done.future())) {
      return drained.get();
    }
    service.shutdown();
    int parked = service.rejectQueued("node is draining; retry on another node");
    gate.close();
    LOG.info("draining: /ready and new selections answer 503, {} queued request(s) answered 503,"
        + " waiting up to {} ms for {} in-flight request(s)", parked, timeout.toMillis(), gate.inFlight());
    java.util.concurrent.CompletableFuture<Boolean> idle = gate.idle().thenApply(v -> true)
        .completeOnTimeout(false, timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
    idle.thenAccept(inTime -> {
      if (!inTime) {
        LOG.warn("drain timeout after {} ms: closing with {} request(s) still in flight", timeout.toMillis(),
            gate.inFlight());
      }
      close().onComplete(ar -> {
        LOG.info("drained and closed");
        done.handle(ar);
      });
    });
    return done.future();
  }

  /** HTTP requests being answered now (the count {@link #drain} waits to reach zero). */
  public int inFlightRequests() {
    return gate.inFlight();
  }

  /** Whether {@link #drain} has started. */
  public boolean draining() {
    return drained.get() != null;
  }

  /** What {@code GET /cluster} reports; {@link ClusterView#standalone()} without {@code --cluster}. */
  public ClusterView cluster() {
    return cluster;
  }

  /** Node-to-node sync of a clustered node ({@code null} when standalone). */
  public io.kvselect.server.cluster.PeerSync peerSync() {
    return peerSync;
  }

  private KvselectNode withPeerSync(io.kvselect.server.cluster.PeerSync sync) {
    this.peerSync = sync;
    cluster.attachSync(sync::json);
    cluster.attachFence(sync::fenceReason);
    cluster.releaseReady();
    return this;
  }

  public Future<Void> close() {
    service.shutdown();
    io.kvselect.server.cluster.PeerSync sync = peerSync;
    Future<Void> closed = sync == null ? vertx.close() : sync.close().eventually(() -> vertx.close());
    io.kvselect.server.sync.replica.ReplicaSync replica = replicaSync;
    return replica == null ? closed
        : closed.eventually(() -> Future.fromCompletionStage(replica.stop()));
  }

  /** Dynamo's replica sync of this node ({@code null} without {@code --replica-sync-port}). */
  public io.kvselect.server.sync.replica.ReplicaSync replicaSync() {
    return replicaSync;
  }

  private KvselectNode withReplicaSync(io.kvselect.server.sync.replica.ReplicaSync replica) {
    this.replicaSync = replica;
    return this;
  }
}
