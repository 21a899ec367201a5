package io.kvselect.tools.mock;

import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A running fleet of mock engines: one Vert.x instance with one {@link MockEngineVerticle} per
 * engine. {@link #start} and {@link #close} block, so call them from a plain thread (a main
 * method, a test, a shutdown hook), never from an event loop.
 */
public final class MockFleet implements AutoCloseable {

  private final Vertx vertx;
  private final List<EngineInfo> engines;

  /** Where {@link #close} first deregisters the engines; null when the fleet did not register. Set once by its starter. */
  private volatile FleetRegistrar registrar;

  private MockFleet(Vertx vertx, List<EngineInfo> engines) {
    this.vertx = vertx;
    this.engines = List.copyOf(engines);
  }

  /** Starts every engine of {@code options}; on any failure stops those already started. */
  public static MockFleet start(MockerOptions options) throws Exception {
    Vertx vertx = Vertx.vertx();
    List<EngineInfo> infos = new ArrayList<>();
    try {
      for (int e = 0; e < options.engines(); e++) {
        MockEngineVerticle v = new MockEngineVerticle(options, e);
        vertx.deployVerticle(v).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        infos.add(v.info());
      }
    } catch (Exception e) {
      vertx.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
      throw e;
    }
    return new MockFleet(vertx, infos);
  }

  /** The started engines, in worker-id order. */
  public List<EngineInfo> engines() {
    return engines;
  }

  /** Makes {@link #close} remove the engines from the node {@code r} registered them with. */
  void deregisterOnClose(FleetRegistrar r) {
    this.registrar = r;
  }

  /**
   * Removes the engines from the node they were registered with (best effort: a node that is gone
   * is skipped), then stops every engine (HTTP servers, then ZMQ threads) and Vert.x; waits up to
   * 20 seconds.
   */
  @Override
  public void close() throws Exception {
    FleetRegistrar r = registrar;
    if (r != null) {
      for (EngineInfo e : engines) {
        if (!r.deregister(e)) {
          org.slf4j.LoggerFactory.getLogger(MockFleet.class)
              .warn(
                  "worker {} could not be removed from the node",
                  Long.toUnsignedString(e.workerId()));
        }
      }
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
