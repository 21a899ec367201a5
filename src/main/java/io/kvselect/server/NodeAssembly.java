package io.kvselect.server;

import io.kvselect.core.kvc.BudgetedKvcState;
import io.kvselect.core.service.SelectionService;
import io.kvselect.core.session.BudgetedSessionAffinity;
import io.kvselect.server.cluster.ClusterView;
import io.kvselect.server.cluster.PeerSync;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.metrics.ServiceMetrics;
import io.kvselect.server.security.HttpGuards;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

/**
 * The one assembly of a node, shared by {@link KvselectNode} (a node on a Vert.x of its own) and
 * {@code Kvselect.deploy} (a node inside an application's Vert.x): it deploys the
 * {@link MainVerticle} (the only place that deploys the node's verticles, Dynamo's replica sync
 * first, so its PUB is bound before anything serves), then, on a cluster member, attaches the
 * node-to-node sync (catalog and index recovered from a peer while {@code /ready} answers 503)
 * and releases readiness. A step that fails undoes what the earlier ones began: the verticles are
 * undeployed, the syncs stopped, the service shut down; the Vert.x instance is left to its owner.
 * Stateless.
 */
public final class NodeAssembly {

  private NodeAssembly() {}

  /** A deployed node: its root verticle and that verticle's deployment id. */
  public record Deployed(MainVerticle main, String deploymentId) {}

  /**
   * Deploys {@code parts} on {@code vertx} with {@code httpInstances} HTTP server instances (0
   * serves the event-bus API only and opens no port), behind {@code guards}, reporting its
   * clustering through {@code view}.
   */
  public static Future<Deployed> deploy(
      Vertx vertx,
      NodeSettings s,
      NodeParts parts,
      int httpInstances,
      ServiceMetrics metrics,
      ClusterView view,
      HttpGuards guards) {
    if (httpInstances < 0) {
      return Future.failedFuture(
          new IllegalArgumentException("httpInstances must not be negative"));
    }
    SelectionService service = parts.service();
    PeerSync sync = parts.sync();
    if (sync != null) {
      // load, catalog and index from the peers once the KV-event coordinator follows the catalog;
      // /ready answers 503 until then
      view.holdReady(PeerSync.RECOVERING);
      bindCluster(parts, view, metrics);
    }
    MainVerticle main = new MainVerticle(s, parts, metrics, httpInstances, guards, view);
    // not bound to a context: the caller may close its Vert.x on a failure, and a completion
    // dispatched onto a closed event loop is rejected and never reaches its listener
    Promise<Deployed> result = Promise.promise();
    vertx
        .deployVerticle(main)
        .compose(
            id ->
                join(sync, service, main, view)
                    .map(v -> new Deployed(main, id))
                    .recover(
                        e -> vertx.undeploy(id).transform(x -> Future.<Deployed>failedFuture(e))))
        .onComplete(
            ar -> {
              if (ar.succeeded()) {
                result.complete(ar.result());
                return;
              }
              service.shutdown();
              Future<Void> syncClosed = sync == null ? Future.succeededFuture() : sync.close();
              syncClosed.onComplete(x -> result.fail(ar.cause()));
            });
    return result.future();
  }

  /** A cluster member's join once its verticles are up: recovery from a peer, then readiness. */
  private static Future<Void> join(
      PeerSync sync, SelectionService service, MainVerticle main, ClusterView view) {
    if (sync == null) {
      return Future.succeededFuture();
    }
    return sync.attach(service, main.events())
        .map(
            o -> {
              view.attachSync(sync::json);
              view.attachFence(sync::fenceReason);
              view.releaseReady();
              return null;
            });
  }

  /** The node's session table: the one its session-affinity verticle owns, when the service calls it over the bus. */
  static io.kvselect.core.session.SessionAffinity sessionTable(SelectionService service) {
    io.kvselect.core.session.SessionAffinity a = service.sessionAffinity();
    return a instanceof io.kvselect.server.session.BusSessionAffinity bus ? bus.owned() : a;
  }

  /** What {@code /cluster} and {@code /metrics} report of a member's shared-state fallbacks and peers. */
  private static void bindCluster(NodeParts parts, ClusterView view, ServiceMetrics metrics) {
    SelectionService service = parts.service();
    if (sessionTable(service) instanceof BudgetedSessionAffinity b) {
      view.attachFallbacks(b::stats, b.budget());
      metrics.bindFallbacks(b);
    }
    if (service.kvcState() instanceof BudgetedKvcState k) {
      metrics.bindKvcFallbacks(k);
      view.attachKvcFallbacks(k);
    }
    metrics.bindCluster(parts.sync(), parts::members);
  }
}
