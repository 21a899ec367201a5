package io.kvselect.tools.loadgen;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;

/**
 * The reference point of the HTTP benchmark: a bare Vert.x server (one instance per core, like
 * kvselect's HTTP adapter) that reads each request body in full and answers {@code {}}, doing no
 * parsing at all. Usage: {@code BareReceiver PORT}; stops on SIGTERM.
 */
public final class BareReceiver extends VerticleBase {

  private final int port;

  BareReceiver(int port) {
    this.port = port;
  }

  @Override
  public Future<?> start() {
    return vertx
        .createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(port))
        .requestHandler(
            req ->
                req.body()
                    .onSuccess(
                        b ->
                            req.response().putHeader("content-type", "application/json").end("{}")))
        .listen();
  }

  public static void main(String[] args) {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 8093;
    Vertx vertx = Vertx.vertx();
    vertx
        .deployVerticle(
            () -> new BareReceiver(port),
            new DeploymentOptions().setInstances(Runtime.getRuntime().availableProcessors()))
        .onSuccess(id -> System.out.println("bare receiver listening on 127.0.0.1:" + port))
        .onFailure(
            e -> {
              System.err.println("bare receiver failed: " + e.getMessage());
              System.exit(1);
            });
    Runtime.getRuntime().addShutdownHook(new Thread(vertx::close, "bare-receiver-shutdown"));
  }
}
