package io.kvselect.server;

import io.kvselect.core.service.SelectionService;
import io.kvselect.server.api.HttpApiVerticle;
import io.kvselect.server.metrics.ServiceMetrics;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one place where a node is wired: it deploys the HTTP adapter instances over a shared
 * {@link SelectionService} and runs the periodic housekeeping (request expiry, TTL indexes, idle
 * session bindings).
 */
public final class MainVerticle extends VerticleBase {

  /** Housekeeping period. */
  static final long HOUSEKEEPING_MS = 5_000;

  private final SelectionService service;
  private final ServiceMetrics metrics;
  private final String host;
  private final int port;
  private final int httpInstances;
  private final AtomicInteger actualPort = new AtomicInteger(-1);
  private long timer = -1;

  public MainVerticle(SelectionService service, ServiceMetrics metrics, String host, int port, int httpInstances) {
    this.service = service;
    this.metrics = metrics;
    this.host = host;
    this.port = port;
    this.httpInstances = httpInstances;
  }

  @Override
  public Future<?> start() {
    metrics.bind(service);
    timer = vertx.setPeriodic(HOUSEKEEPING_MS, id -> service.expire());
    return vertx.deployVerticle(() -> new HttpApiVerticle(service, metrics, host, port, actualPort::set),
        new DeploymentOptions().setInstances(httpInstances));
  }

  @Override
  public Future<?> stop() {
    service.shutdown();
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return Future.succeededFuture();
  }

  /** The port the HTTP server listens on (useful with port 0). */
  public int port() {
    return actualPort.get();
  }
}
