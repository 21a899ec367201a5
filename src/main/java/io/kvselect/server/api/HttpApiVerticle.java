package io.kvselect.server.api;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.metrics.ServiceMetrics;
import io.kvselect.server.sync.IndexRecovery;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.Locale;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP adapter: Dynamo's selection-service routes over Vert.x Web. Handlers decode the body,
 * call {@link SelectionService} (fast, in-memory) and write the response; every failure goes
 * through one failure handler that writes {@code {"error": "..."}} with the status of its
 * {@link ErrorCode}. Several instances may be deployed; they share the service.
 */
public final class HttpApiVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(HttpApiVerticle.class);

  private static final String UNSUPPORTED_MEDIA_TYPE =
      "Expected request with `Content-Type: application/json`";

  /** Dynamo's request body limit. */
  public static final long BODY_LIMIT = 8L * 1024 * 1024;

  private final SelectionService service;
  private final ServiceMetrics metrics;
  private final String host;
  private final int port;
  private final IntConsumer onListen;

  /** The route table, set by {@link #start()}; read by tests that compare it with openapi.json. */
  private volatile Router router;

  private final KvEventsCoordinator events;
  private final Supplier<IndexRecovery.Outcome> recovery;

  /** {@code GET /config}: the node's effective configuration, encoded once. */
  private final String config;

  private HttpServer server;

  /** Request gate, bearer token and TLS ({@link HttpGuards#NONE} when none is configured). */
  private final io.kvselect.server.security.HttpGuards guards;

  /** {@code GET /cluster} and the {@code cluster} field of {@code /ready}. */
  private final io.kvselect.server.cluster.ClusterView cluster;

  /** {@code events} is null when the node runs without KV-event ingestion (approximate mode). */
  private io.kvselect.server.sync.replica.ReplicaSync replica;

  /**
   * An HTTP server on {@code host:port} (its bound port to {@code onListen}) behind {@code guards}
   * (request gate, bearer token, TLS), on a node whose clustering {@code cluster} reports.
   */
  public HttpApiVerticle(
      SelectionService service,
      ServiceMetrics metrics,
      KvEventsCoordinator events,
      Supplier<IndexRecovery.Outcome> recovery,
      String host,
      int port,
      IntConsumer onListen,
      java.util.Map<String, Object> config,
      io.kvselect.server.security.HttpGuards guards,
      io.kvselect.server.cluster.ClusterView cluster) {
    this.guards = guards;
    this.cluster = cluster;
    this.config = new io.vertx.core.json.JsonObject(config).encode();
    this.recovery = recovery;
    this.service = service;
    this.events = events;
    this.metrics = metrics;
    this.host = host;
    this.port = port;
    this.onListen = onListen;
  }

  /** Listener warnings {@code /ui/state} reports (none unless set). */
  private java.util.function.Supplier<
          java.util.List<io.kvselect.server.liveness.RetryingListenerWatch.Warning>>
      warnings = java.util.List::of;

  /** Sets where {@code /ui/state} reads the listener warnings from; call before deployment. */
  public HttpApiVerticle listenerWarnings(
      java.util.function.Supplier<
              java.util.List<io.kvselect.server.liveness.RetryingListenerWatch.Warning>>
          w) {
    this.warnings = w;
    return this;
  }

  /** The endpoint picker's figures {@code /ui/state} reports (null: the picker is off). */
  private java.util.function.Supplier<io.kvselect.server.epp.EppMetrics.Summary> picker;

  /** Sets where {@code /ui/state} reads the endpoint picker's figures from (null: off); call before deployment. */
  public HttpApiVerticle picker(
      java.util.function.Supplier<io.kvselect.server.epp.EppMetrics.Summary> p) {
    this.picker = p;
    return this;
  }

  /** Dynamo's replica sync behind {@code /replica_sync/*} (null: disabled). */
  public HttpApiVerticle replicaSync(io.kvselect.server.sync.replica.ReplicaSync r) {
    this.replica = r;
    return this;
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    router.route().handler(this::timed);
    guards.mount(router);
    router.route().handler(HttpApiVerticle::requireJsonBody);
    router
        .route()
        .handler(BodyHandler.create(false).setBodyLimit(BODY_LIMIT).setMergeFormAttributes(false));
    new UiRoutes(
            service,
            events,
            java.time.Clock.systemUTC(),
            cluster.enabled(),
            cluster.enabled() || replica != null,
            metrics::history,
            warnings)
        .picker(picker)
        .mount(this.router = router);
    router
        .get("/config")
        .handler(ctx -> ctx.response().putHeader("content-type", "application/json").end(config));
    new Routes(vertx, service, metrics, events, recovery, cluster)
        .replicaSync(replica)
        .mount(router);
    router.route().failureHandler(this::failure);
    router.errorHandler(404, ctx -> writeError(ctx, 404, "route not found"));
    router.errorHandler(405, ctx -> writeError(ctx, 405, "method not allowed"));
    router.errorHandler(
        413,
        ctx -> writeError(ctx, 413, "request body exceeds the limit of " + BODY_LIMIT + " bytes"));
    // no cleartext HTTP/2 upgrade (h2c): a client that asks for it (the JDK's HttpClient does by
    // default) is answered in HTTP/1.1, as Dynamo's server answers. With it on, under concurrent
    // load, an upgraded connection now and then carried HTTP/1.1 bytes where the client expected
    // an HTTP/2 frame ("Frame type(123) ... exceeds MAX_FRAME_SIZE") or never got its answer:
    // the requests "never answered" of the flaky tests (EveryRequestAnsweredStressTest)
    server =
        vertx.createHttpServer(
            guards.apply(
                new HttpServerOptions()
                    .setHost(host)
                    .setPort(port)
                    .setHttp2ClearTextEnabled(false)));
    return server
        .requestHandler(
            req -> {
              if (hasHost(req)) {
                router.handle(req);
              }
            })
        .listen()
        .onSuccess(s -> onListen.accept(s.actualPort()));
  }

  /**
   * HTTP/1.1 requires a {@code Host} header and Vert.x Web refuses to route a request without
   * one; answers it 400 naming the header (else it surfaced as a 500) and closes the connection.
   */
  static boolean hasHost(HttpServerRequest req) {
    if (req.version() != HttpVersion.HTTP_1_1 || req.headers().contains(HttpHeaders.HOST)) {
      return true;
    }
    req.response()
        .setStatusCode(400)
        .putHeader("content-type", "application/json")
        .putHeader(HttpHeaders.CONNECTION, "close")
        .end(
            Buffer.buffer(
                ResponseJson.error("the Host header is required for HTTP/1.1 requests", null)))
        .onComplete(x -> req.connection().close());
    return false;
  }

  /** The router of this instance once started (null before). */
  Router router() {
    return router;
  }

  @Override
  public Future<?> stop() {
    return server == null ? Future.succeededFuture() : server.close();
  }

  private void timed(RoutingContext ctx) {
    long start = System.nanoTime();
    ctx.addBodyEndHandler(
        v -> {
          String route =
              ctx.currentRoute() != null && ctx.currentRoute().getPath() != null
                  ? ctx.currentRoute().getPath()
                  : "unmatched";
          metrics.request(route, ctx.request().method().name(), System.nanoTime() - start);
        });
    ctx.next();
  }

  /**
   * Keeps every body away from Vert.x's form decoder, which the body handler switches on whenever
   * the content type names a form ({@code application/x-www-form-urlencoded},
   * {@code multipart/form-data}) and which fails (size-limited attributes, a missing boundary, an
   * unknown charset) with a 500. No route takes anything but JSON, so:
   * <ul>
   *   <li>a request that carries a body not declared as JSON gets 415 here, before the body
   *       handler reads a byte of it;
   *   <li>a request without a body passes whatever its content type (a bodiless
   *       {@code POST .../prefill_complete} sent as an empty form by {@code curl -d ''} is fine),
   *       but a form content type is removed from it first, so that nothing decodes the empty form;
   *   <li>a body without a content type passes, and the route that reads it answers 415.
   * </ul>
   */
  private static void requireJsonBody(RoutingContext ctx) {
    HttpServerRequest req = ctx.request();
    String contentType = req.getHeader(HttpHeaders.CONTENT_TYPE);
    if (contentType != null && !Routes.isJson(contentType)) {
      if (hasBody(req)) {
        ctx.fail(new SelectionException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, UNSUPPORTED_MEDIA_TYPE));
        return;
      }
      if (isForm(contentType)) {
        req.headers().remove(HttpHeaders.CONTENT_TYPE);
      }
    }
    ctx.next();
  }

  /** The content types for which the body handler starts Vert.x's form decoder. */
  private static boolean isForm(String contentType) {
    String ct = contentType.trim().toLowerCase(Locale.ROOT);
    return ct.startsWith("application/x-www-form-urlencoded") || ct.startsWith("multipart/");
  }

  /** Whether the request announces a body: chunked, or a Content-Length other than zero. */
  private static boolean hasBody(HttpServerRequest req) {
    if (req.headers().contains(HttpHeaders.TRANSFER_ENCODING)) {
      return true;
    }
    String length = req.getHeader(HttpHeaders.CONTENT_LENGTH);
    if (length == null) {
      return false;
    }
    try {
      return Long.parseLong(length.trim()) != 0;
    } catch (NumberFormatException e) {
      return true;
    }
  }

  private void failure(RoutingContext ctx) {
    Throwable t = ctx.failure();
    if (t instanceof SelectionException se) {
      writeError(ctx, se.code().httpStatus(), se.getMessage(), se.details());
    } else if (t == null && ctx.statusCode() >= 400) {
      int s = ctx.statusCode();
      writeError(
          ctx,
          s,
          switch (s) {
            case 404 -> "route not found";
            case 405 -> "method not allowed";
            case 413 -> "request body exceeds the limit of " + BODY_LIMIT + " bytes";
            case 415 -> UNSUPPORTED_MEDIA_TYPE;
            default -> "request failed";
          });
    } else {
      LOG.error("unexpected failure on {} {}", ctx.request().method(), ctx.request().path(), t);
      writeError(ctx, 500, "internal error");
    }
  }

  static void writeError(RoutingContext ctx, int status, String message) {
    writeError(ctx, status, message, null);
  }

  static void writeError(
      RoutingContext ctx, int status, String message, java.util.Map<String, Object> details) {
    if (ctx.response().ended() || ctx.response().closed()) {
      return;
    }
    ctx.response()
        .setStatusCode(status)
        .putHeader("content-type", "application/json")
        .end(Buffer.buffer(ResponseJson.error(WellFormedText.of(message), details)));
  }
}
