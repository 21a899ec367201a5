package io.kvselect.server.bus;

import io.kvselect.core.service.SelectionService;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.MainVerticle;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.metrics.ServiceMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * kvselect deployed into an application's own Vert.x instance, clustered or not: the same
 * {@link MainVerticle} as {@code bin/kvselect} (event-bus API on {@link BusAddresses}, published
 * events, housekeeping, KV-event ingestion when the index is event-driven, and the HTTP server
 * unless disabled). On a clustered Vert.x the API addresses and events are cluster-wide, so every
 * application of the cluster can use them. Undeploying (or closing the application's Vert.x)
 * stops it; it never closes the Vert.x instance it was given.
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

  private Kvselect(Vertx vertx, SelectionService service, MainVerticle main, String deploymentId) {
    this.vertx = vertx;
    this.service = service;
    this.main = main;
    this.deploymentId = deploymentId;
  }

  /**
   * Deploys a node described by {@code settings} (as {@code bin/kvselect} resolves them) with one
   * HTTP server instance on {@code settings.host():settings.port()} and one event-bus API instance.
   */
  public static Future<Kvselect> deploy(Vertx vertx, NodeSettings settings) {
    return deploy(vertx, settings, KvselectNode.service(settings), 1);
  }

  /**
   * Deploys a node over {@code service} with {@code httpInstances} HTTP server instances; 0 serves
   * the event-bus API only (one instance) and opens no port.
   */
  public static Future<Kvselect> deploy(Vertx vertx, NodeSettings settings, SelectionService service,
      int httpInstances) {
    if (httpInstances < 0) {
      return Future.failedFuture(new IllegalArgumentException("httpInstances must not be negative"));
    }
    MainVerticle main = new MainVerticle(service, new ServiceMetrics(), settings.host(), settings.port(),
        httpInstances, settings.threads(), settings.indexerPeers(), settings.configJson());
    return vertx.deployVerticle(main, new DeploymentOptions())
        .map(id -> new Kvselect(vertx, service, main, id))
        .onFailure(e -> service.shutdown());
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

  /** Stops the node's verticles (the service turns not-ready first); the Vert.x instance stays up. */
  public Future<Void> undeploy() {
    service.shutdown();
    return vertx.undeploy(deploymentId);
  }
}
