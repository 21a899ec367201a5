package io.kvselect.server;

import io.kvselect.core.service.SelectionService;
import io.kvselect.server.cluster.ClusterBootstrap;
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
 * A running kvselect node on a Vert.x instance of its own: the handle {@code bin/kvselect} and the
 * tests (with port 0) hold over the parts {@link NodeAssembly} deployed. Closing it closes the
 * Vert.x instance.
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

  /** Node-to-node sync of a clustered node ({@code null} when standalone); attached by the assembly. */
  private final io.kvselect.server.cluster.PeerSync peerSync;

  /** Dynamo's replica sync ({@code null} without {@code --replica-sync-port}); started and stopped by its verticle. */
  private final io.kvselect.server.sync.replica.ReplicaSync replicaSync;

  private KvselectNode(
      Vertx vertx,
      NodeParts parts,
      MainVerticle main,
      io.kvselect.server.drain.RequestGate gate,
      ClusterView cluster) {
    this.vertx = vertx;
    this.service = parts.service();
    this.peerSync = parts.sync();
    this.replicaSync = parts.replica();
    this.main = main;
    this.gate = gate;
    this.cluster = cluster;
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
    return start(s, httpInstances);
  }

  /** Starts a standalone node as {@code s} describes it with {@code httpInstances} HTTP verticles. */
  public static Future<KvselectNode> start(NodeSettings s, int httpInstances) {
    ServiceMetrics metrics = new ServiceMetrics();
    Vertx vertx = standaloneVertx(metrics);
    NodeParts parts;
    try {
      parts = NodeParts.standalone(s, vertx);
    } catch (RuntimeException e) {
      return vertx.close().transform(x -> Future.failedFuture(e));
    }
    return deploy(vertx, s, parts, httpInstances, metrics, ClusterView.standalone());
  }

  /** Starts a standalone node over {@code parts} (say {@link NodeParts#of} a service) with {@code httpInstances} HTTP verticles. */
  public static Future<KvselectNode> start(NodeSettings s, NodeParts parts, int httpInstances) {
    ServiceMetrics metrics = new ServiceMetrics();
    return deploy(
        standaloneVertx(metrics), s, parts, httpInstances, metrics, ClusterView.standalone());
  }

  private static Vertx standaloneVertx(ServiceMetrics metrics) {
    return Vertx.builder()
        .with(vertxOptions())
        .withMetrics(new MicrometerMetricsFactory(metrics.registry()))
        .build();
  }

  private static VertxOptions vertxOptions() {
    return new VertxOptions()
        .setMetricsOptions(
            new MicrometerMetricsOptions()
                .setEnabled(true)
                .setJvmMetricsEnabled(true)
                // the pool labels tell the worker pool from the internal blocking pool: without
                // them both
                // map to one meter id and the second registration is refused with a warning
                .setLabels(
                    EnumSet.of(
                        Label.HTTP_METHOD,
                        Label.HTTP_CODE,
                        Label.HTTP_ROUTE,
                        Label.POOL_TYPE,
                        Label.POOL_NAME)));
  }

  /**
   * The clustered start: joins (or forms) the cluster, then builds the parts with the Hazelcast
   * session table and pending store ({@link NodeParts#clustered}) and deploys as usual.
   */
  private static Future<KvselectNode> startClustered(NodeSettings s, int httpInstances) {
    ServiceMetrics metrics = new ServiceMetrics();
    return ClusterBootstrap.start(
            vertxOptions(),
            new MicrometerMetricsFactory(metrics.registry()),
            s.cluster(),
            s.selectionCacheMaxEntries())
        .compose(
            c -> {
              NodeParts parts;
              try {
                parts = NodeParts.clustered(s, c.vertx(), c.hazelcast());
              } catch (RuntimeException e) {
                return c.vertx().close().transform(x -> Future.<KvselectNode>failedFuture(e));
              }
              return deploy(c.vertx(), s, parts, httpInstances, metrics, c.view());
            });
  }

  private static Future<KvselectNode> deploy(
      Vertx vertx,
      NodeSettings s,
      NodeParts parts,
      int httpInstances,
      ServiceMetrics metrics,
      ClusterView cluster) {
    io.kvselect.server.drain.RequestGate gate = new io.kvselect.server.drain.RequestGate();
    // not bound to a context: chaining the failure after vertx.close() would dispatch it onto the
    // closed event loop, where it is rejected and the caller waits forever
    Promise<KvselectNode> result = Promise.promise();
    NodeAssembly.deploy(
            vertx,
            s,
            parts,
            httpInstances,
            metrics,
            cluster,
            io.kvselect.server.security.HttpGuards.of(s.operations(), gate))
        .onComplete(
            ar -> {
              if (ar.succeeded()) {
                io.kvselect.server.security.Exposure.warning(s.host(), s.operations().authEnabled())
                    .ifPresent(LOG::warn);
                result.complete(new KvselectNode(vertx, parts, ar.result().main(), gate, cluster));
              } else {
                result.fail(ar.cause());
                vertx.close();
              }
            });
    return result.future();
  }

  public int port() {
    return main.port();
  }

  /** The endpoint picker's gRPC port, or -1 without {@code --epp-port}. */
  public int eppPort() {
    return main.eppPort();
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
    LOG.info(
        "draining: /ready and new selections answer 503, {} queued request(s) answered 503,"
            + " waiting up to {} ms for {} in-flight request(s)",
        parked,
        timeout.toMillis(),
        gate.inFlight());
    java.util.concurrent.CompletableFuture<Boolean> idle =
        gate.idle()
            .thenApply(v -> true)
            .completeOnTimeout(false, timeout.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
    idle.thenAccept(
        inTime -> {
          if (!inTime) {
            LOG.warn(
                "drain timeout after {} ms: closing with {} request(s) still in flight",
                timeout.toMillis(),
                gate.inFlight());
          }
          close()
              .onComplete(
                  ar -> {
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

  public Future<Void> close() {
    service.shutdown();
    io.kvselect.server.cluster.PeerSync sync = peerSync;
    // closing the Vert.x undeploys every verticle: the replica-sync verticle stops its mesh
    return sync == null ? vertx.close() : sync.close().eventually(() -> vertx.close());
  }

  /** Dynamo's replica sync of this node ({@code null} without {@code --replica-sync-port}). */
  public io.kvselect.server.sync.replica.ReplicaSync replicaSync() {
    return replicaSync;
  }
}
