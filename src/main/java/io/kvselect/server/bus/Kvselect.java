package io.kvselect.server.bus;

import io.kvselect.core.service.SelectionService;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.MainVerticle;
import io.kvselect.server.cluster.ClusterSeams;
import io.kvselect.server.cluster.ClusterView;
import io.kvselect.server.cluster.PeerSync;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.metrics.ServiceMetrics;
import io.kvselect.server.sync.replica.ReplicaSync;
import io.vertx.core.DeploymentOptions;
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
 * Undeploying (or closing the application's Vert.x) stops it; it never closes the Vert.x instance
 * it was given.
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
  /** Dynamo's replica sync with {@code --replica-sync-port}; null otherwise. Started and stopped by this handle. */
  private final ReplicaSync replica;

  private Kvselect(Vertx vertx, SelectionService service, MainVerticle main, String deploymentId, PeerSync sync,
      ReplicaSync replica) {
    this.vertx = vertx;
    this.service = service;
    this.main = main;
    this.deploymentId = deploymentId;
    this.sync = sync;
    this.replica = replica;
  }

  /**
   * Deploys a node described by {@code settings} (as {@code bin/kvselect} resolves them) with one
   * HTTP server instance on {@code settings.host():settings.port()} and one event-bus API instance.
   * On a clustered {@code vertx} the node is a cluster member like {@code bin/kvselect --cluster}
   * (shared seams and {@link PeerSync}, through {@link ClusterSeams#build}); it completes once the
   * node has recovered catalog and index from a peer (or found none).
   */
  public static Future<Kvselect> deploy(Vertx vertx, NodeSettings settings) {
    if (!vertx.isClustered()) {
      return deploy(vertx, settings, KvselectNode.service(settings), 1);
    }
    ClusterSeams.Node node;
    ClusterView view;
    try {
      com.hazelcast.core.HazelcastInstance hz = ClusterSeams.hazelcast(vertx);
      node = KvselectNode.clusteredNode(settings, vertx, hz);
      view = ClusterView.embedded(hz, node.sync().nodeId());
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    PeerSync sync = node.sync();
    view.holdReady(PeerSync.RECOVERING);
    return deploy(vertx, settings, node.service(), 1, view, sync)
        .compose(k -> sync.attach(k.service, k.main.events()).map(o -> {
          view.attachSync(sync::json);
          view.attachFence(sync::fenceReason);
          view.releaseReady();
          return k;
        }).recover(e -> k.undeploy().transform(x -> Future.<Kvselect>failedFuture(e))));
  }

  /**
   * Deploys a node over {@code service} with {@code httpInstances} HTTP server instances; 0 serves
   * the event-bus API only (one instance) and opens no port.
   */
  public static Future<Kvselect> deploy(Vertx vertx, NodeSettings settings, SelectionService service,
      int httpInstances) {
    return deploy(vertx, settings, service, httpInstances, ClusterView.standalone(), null);
  }

  private static Future<Kvselect> deploy(Vertx vertx, NodeSettings settings, SelectionService service,
      int httpInstances, ClusterView view, PeerSync sync) {
    if (httpInstances < 0) {
      return Future.failedFuture(new IllegalArgumentException("httpInstances must not be negative"));
    }
    // the same bearer token and TLS as bin/kvselect: embedding must not open what the settings close
    MainVerticle main = new MainVerticle(service, new ServiceMetrics(), settings.host(), settings.port(),
        httpInstances, settings.threads(), settings.indexerPeers(), settings.configJson(),
        io.kvselect.server.security.HttpGuards.of(settings.operations(), new io.kvselect.server.drain.RequestGate()),
        view);
    // the replica sync KvselectNode.service (or the clustered build above) made for this service,
    // as bin/kvselect starts it: PUB bound before the verticles deploy, stopped with the handle
    ReplicaSync replica = ReplicaSync.claim(service);
    main.replicaSync(replica);
    Future<Void> bound = replica == null ? Future.succeededFuture() : Future.fromCompletionStage(replica.start(service));
    return bound.compose(b -> vertx.deployVerticle(main, new DeploymentOptions()))
        .compose(id -> io.kvselect.server.Operations.deploy(vertx, settings.operations(), service, main.events())
            .map(v -> new Kvselect(vertx, service, main, id, sync, replica)))
        .onFailure(e -> {
          service.shutdown();
          if (replica != null) {
            replica.stop();
          }
        });
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
    return stopped.eventually(() -> vertx.undeploy(deploymentId)).eventually(() -> replica == null
        ? Future.succeededFuture() : Future.fromCompletionStage(replica.stop()));
  }
}
