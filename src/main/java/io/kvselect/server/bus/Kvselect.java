package io.kvselect.server.bus;

import io.kvselect.core.service.SelectionService;
import io.kvselect.server.MainVerticle;
import io.kvselect.server.NodeAssembly;
import io.kvselect.server.NodeParts;
import io.kvselect.server.cluster.ClusterSeams;
import io.kvselect.server.cluster.ClusterView;
import io.kvselect.server.cluster.PeerSync;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.metrics.ServiceMetrics;
import io.kvselect.server.sync.replica.ReplicaSync;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * kvselect deployed into an application's own Vert.x instance, clustered or not: the same
 * {@link MainVerticle} as {@code bin/kvselect} (event-bus API on {@link BusAddresses}, published
 * events, housekeeping, KV-event ingestion when the index is event-driven, and the HTTP server
 * unless disabled). On a clustered Vert.x the API addresses and events are cluster-wide, so every
 * application of the cluster can use them, and {@link #deploy(Vertx, NodeSettings)} joins the
 * kvselect deployments of the cluster exactly as {@code bin/kvselect --cluster} nodes join each
 * other: shared session table and pending selections in Hazelcast, load, catalog and lifecycle
 * calls in step over the event bus (the cluster manager must be Vert.x's Hazelcast one).
 * With {@code --replica-sync-port} it also runs Dynamo's replica sync, as {@code bin/kvselect} does.
 * Undeploying (or closing the application's Vert.x) stops it and every verticle it deployed; it
 * never closes the Vert.x instance it was given.
 *
 * <pre>{@code
 * NodeSettings s = NodeSettings.parse(new String[] {"--host", "127.0.0.1", "--port", "0"}, System.getenv());
 * Kvselect.deploy(vertx, s).onSuccess(k -> vertx.eventBus().request(BusAddresses.SELECT_AND_RESERVE, body));
 * }</pre>
 *
 * <p>Immutable handle; thread-safe.
 */
public final class Kvselect {

  private final Vertx vertx;
  private final SelectionService service;
  private final MainVerticle main;
  private final String deploymentId;

  /** Node-to-node sync on a clustered Vert.x; null otherwise. */
  private final PeerSync sync;

  /** Dynamo's replica sync with {@code --replica-sync-port}; null otherwise. Started and stopped by its verticle. */
  private final ReplicaSync replica;

  private Kvselect(Vertx vertx, NodeParts parts, MainVerticle main, String deploymentId) {
    this.vertx = vertx;
    this.service = parts.service();
    this.main = main;
    this.deploymentId = deploymentId;
    this.sync = parts.sync();
    this.replica = parts.replica();
  }

  /**
   * Deploys a node described by {@code settings} (as {@code bin/kvselect} resolves them) with one
   * HTTP server instance on {@code settings.host():settings.port()} and one event-bus API instance.
   * On a clustered {@code vertx} the node is a cluster member like {@code bin/kvselect --cluster}
   * (shared seams and {@link PeerSync}, {@link NodeParts#clustered}); it completes once the node
   * has recovered catalog and index from a peer (or found none).
   */
  public static Future<Kvselect> deploy(Vertx vertx, NodeSettings settings) {
    NodeParts parts;
    ClusterView view;
    try {
      if (vertx.isClustered()) {
        com.hazelcast.core.HazelcastInstance hz = ClusterSeams.hazelcast(vertx);
        parts = NodeParts.clustered(settings, vertx, hz);
        view = ClusterView.embedded(hz, parts.sync().nodeId());
      } else {
        parts = NodeParts.standalone(settings, vertx);
        view = ClusterView.standalone();
      }
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    return deploy(vertx, settings, parts, 1, view);
  }

  /**
   * Deploys a standalone node over {@code parts} (say {@link NodeParts#of} a service you built)
   * with {@code httpInstances} HTTP server instances; 0 serves the event-bus API only (one
   * instance) and opens no port.
   */
  public static Future<Kvselect> deploy(
      Vertx vertx, NodeSettings settings, NodeParts parts, int httpInstances) {
    if (parts.sync() != null) {
      return Future.failedFuture(
          new IllegalArgumentException(
              "clustered parts are deployed by deploy(vertx, settings) on the clustered Vert.x they were built for"));
    }
    return deploy(vertx, settings, parts, httpInstances, ClusterView.standalone());
  }

  private static Future<Kvselect> deploy(
      Vertx vertx, NodeSettings settings, NodeParts parts, int httpInstances, ClusterView view) {
    // the same bearer token and TLS as bin/kvselect: embedding must not open what the settings
    // close
    io.kvselect.server.security.HttpGuards guards =
        io.kvselect.server.security.HttpGuards.of(
            settings.operations(), new io.kvselect.server.drain.RequestGate());
    return NodeAssembly.deploy(
            vertx, settings, parts, httpInstances, new ServiceMetrics(), view, guards)
        .map(d -> new Kvselect(vertx, parts, d.main(), d.deploymentId()));
  }

  public SelectionService service() {
    return service;
  }

  /** The HTTP port (useful with port 0), or -1 when no HTTP server runs. */
  public int httpPort() {
    return main.port();
  }

  /** The {@code node} field of the events this deployment publishes. */
  public String node() {
    return main.busEvents().node();
  }

  public String deploymentId() {
    return deploymentId;
  }

  /** Dynamo's replica sync when the settings have {@code --replica-sync-port}, else null. */
  public ReplicaSync replicaSync() {
    return replica;
  }

  /** Node-to-node sync when deployed on a clustered Vert.x by {@link #deploy(Vertx, NodeSettings)}, else null. */
  public PeerSync peerSync() {
    return sync;
  }

  /**
   * Stops the node's verticles (the service turns not-ready first) and its node-to-node sync; the
   * Vert.x instance stays up.
   */
  public Future<Void> undeploy() {
    service.shutdown();
    Future<Void> stopped = sync == null ? Future.succeededFuture() : sync.close();
    // the replica sync is stopped by its verticle, a child of the root
    return stopped.eventually(() -> vertx.undeploy(deploymentId));
  }
}
