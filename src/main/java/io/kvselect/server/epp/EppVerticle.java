package io.kvselect.server.epp;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.config.EppSettings;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.internal.VertxInternal;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The endpoint picker of the Gateway API Inference Extension: a gRPC server (grpc-java on its own
 * shaded Netty) serving Envoy's {@code ext_proc} v3 {@code ExternalProcessor.Process} and
 * {@code grpc.health.v1.Health} with the services {@code liveness}, {@code readiness} and
 * {@code envoy.service.ext_proc.v3.ExternalProcessor} (ready: the node's {@code /ready} holds).
 * A thin adapter: each stream is an {@link ExtProcStream} confined to one Vert.x event-loop
 * context, and a pick is an {@link EppPicker} call on the node's {@link SelectionService}.
 *
 * <p>Owns the gRPC server (started and stopped here, on the worker pool: binding blocks) and the
 * health statuses (set by this verticle's timer).
 */
public final class EppVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(EppVerticle.class);
  static final String EXT_PROC_SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor";

  /** How often readiness is refreshed. */
  static final long HEALTH_PERIOD_MS = 1_000;

  private final SelectionService service;
  private final EppSettings settings;
  private final String host;
  private final BooleanSupplier ready;
  private final EppMetrics metrics;
  private final IntConsumer boundPort;
  private final HealthStatusManager health = new HealthStatusManager();
  private Server server;
  private long timer = -1;

  /**
   * A picker over {@code service} listening on {@code host} and {@code settings.port()}, ready
   * while {@code ready} holds; the port bound is reported to {@code boundPort}.
   */
  public EppVerticle(
      SelectionService service,
      EppSettings settings,
      String host,
      BooleanSupplier ready,
      EppMetrics metrics,
      IntConsumer boundPort) {
    this.service = service;
    this.settings = settings;
    this.host = host;
    this.ready = ready;
    this.metrics = metrics;
    this.boundPort = boundPort;
  }

  @Override
  public Future<?> start() {
    EppPicker picker = new EppPicker(service, new RenderClient(settings.renderTimeout()), settings);
    StreamBooking.Lifecycle lifecycle =
        new StreamBooking.Lifecycle() {
          @Override
          public void prefillComplete(String id) {
            service
                .prefillComplete(id)
                .exceptionally(
                    e -> {
                      LOG.debug("prefill_complete {} failed: {}", id, e.toString());
                      return null;
                    });
          }

          @Override
          public void free(String id) {
            service
                .free(id)
                .exceptionally(
                    e -> {
                      LOG.debug("free {} failed: {}", id, e.toString());
                      return null;
                    });
          }
        };
    ExternalProcessorGrpc.ExternalProcessorImplBase extProc =
        new ExternalProcessorGrpc.ExternalProcessorImplBase() {
          @Override
          public StreamObserver<ProcessingRequest> process(StreamObserver<ProcessingResponse> out) {
            // a fresh event-loop context per stream (the next loop in turn): every callback of the
            // stream
            // runs there, in order; getOrCreateContext() on a gRPC thread would hand every stream
            // of
            // that thread one sticky context
            metrics.streamOpened();
            ExtProcStream stream =
                new ExtProcStream(
                    ((VertxInternal) vertx).createEventLoopContext(),
                    out,
                    picker,
                    metrics,
                    settings.maxBodyBytes(),
                    lifecycle) {
                  @Override
                  void closed() {
                    metrics.streamClosed();
                  }
                };
            // with a cancel handler a send after the reset is dropped instead of thrown
            ((ServerCallStreamObserver<ProcessingResponse>) out)
                .setOnCancelHandler(stream::cancelled);
            return stream;
          }
        };
    refreshHealth();
    return vertx
        .executeBlocking(
            () -> {
              Server s =
                  NettyServerBuilder.forAddress(new InetSocketAddress(host, settings.port()))
                      .directExecutor()
                      .permitKeepAliveTime(10, TimeUnit.SECONDS)
                      .permitKeepAliveWithoutCalls(true)
                      .addService(extProc)
                      .addService(health.getHealthService())
                      .build()
                      .start();
              return s;
            },
            false)
        .map(
            s -> {
              server = s;
              boundPort.accept(s.getPort());
              timer = vertx.setPeriodic(HEALTH_PERIOD_MS, id -> refreshHealth());
              LOG.info(
                  "endpoint picker (Envoy ext_proc, gRPC health) listening on {}:{}",
                  host,
                  s.getPort());
              return s;
            });
  }

  /** Liveness always serves; readiness and the ext_proc service follow the node's readiness. */
  private void refreshHealth() {
    health.setStatus("liveness", ServingStatus.SERVING);
    ServingStatus s = ready.getAsBoolean() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
    health.setStatus("readiness", s);
    health.setStatus(EXT_PROC_SERVICE, s);
    health.setStatus("", s);
  }

  @Override
  public Future<?> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    Server s = server;
    if (s == null) {
      return Future.succeededFuture();
    }
    health.enterTerminalState();
    return vertx.executeBlocking(
        () -> {
          s.shutdown();
          if (!s.awaitTermination(2, TimeUnit.SECONDS)) {
            s.shutdownNow();
          }
          return null;
        },
        false);
  }
}
