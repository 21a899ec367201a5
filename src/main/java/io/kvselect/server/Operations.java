package io.kvselect.server;

import io.kvselect.core.service.SelectionService;
import io.kvselect.server.config.OperationsSettings;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.liveness.LivenessVerticle;
import io.kvselect.server.workers.WorkersFileVerticle;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deploys what {@link OperationsSettings} switches on besides the HTTP guards; called by
 * {@link MainVerticle#start} only, so these verticles are its children. Stateless.
 */
final class Operations {

  private static final Logger LOG = LoggerFactory.getLogger(Operations.class);

  private Operations() {}

  /**
   * The workers-file watcher (its first apply done, successful or logged) and the liveness
   * watcher; {@code events} is null in approximate mode, where liveness watches health URLs only.
   */
  static Future<Void> deploy(
      Vertx vertx, OperationsSettings s, SelectionService service, KvEventsCoordinator events) {
    Future<?> f = Future.succeededFuture();
    if (s.workersFile() != null) {
      f =
          f.compose(
              v ->
                  vertx.deployVerticle(
                      new WorkersFileVerticle(service, s.workersFile(), s.workersFilePoll())));
    }
    if (s.livenessEnabled()) {
      if (events == null) {
        LOG.info(
            "liveness watches the workers' health_url only (no KV-event connections in approximate mode)");
      }
      f =
          f.compose(
              v -> vertx.deployVerticle(new LivenessVerticle(service, events, s.livenessGrace())));
    }
    return f.mapEmpty();
  }
}
