package io.kvselect.server.api;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.ReadyStatus;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.events.RankStats;
import io.kvselect.server.metrics.ServiceMetrics;
import io.kvselect.server.sync.IndexRecovery;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RequestBody;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The route table of Dynamo's standalone selection service and the handlers behind it. The
 * selection, reservation and catalog handlers take the body, path and headers to
 * {@link ApiOperations} (the parse, service call and rendering the event-bus API shares) and write
 * its answer; exceptions and failed stages reach the router's failure handler.
 */
final class Routes {

  private static final String JSON = "application/json";

  /** Dynamo's header naming the router-queue policy class of a selection. */
  static final String POLICY_CLASS_HEADER = "x-dynamo-meta-policy-class";

  private final Vertx vertx;
  private final SelectionService service;
  private final ServiceMetrics metrics;
  private final KvEventsCoordinator events;

  private final Supplier<IndexRecovery.Outcome> recovery;
  private final io.kvselect.server.cluster.ClusterView cluster;
  private final ApiOperations ops;
  private io.kvselect.server.sync.replica.ReplicaSync replica;

  Routes(
      Vertx vertx,
      SelectionService service,
      ServiceMetrics metrics,
      KvEventsCoordinator events,
      Supplier<IndexRecovery.Outcome> recovery,
      io.kvselect.server.cluster.ClusterView cluster) {
    this.cluster = cluster;
    this.recovery = recovery;
    this.vertx = vertx;
    this.service = service;
    this.metrics = metrics;
    this.events = events;
    this.ops = new ApiOperations(service, events);
  }

  void mount(Router r) {
    r.post("/workers").handler(ctx -> answer(ctx, ops.createWorker(jsonBody(ctx))));
    r.get("/workers")
        .handler(
            ctx ->
                answer(
                    ctx,
                    ops.listWorkers(
                        ctx.queryParams().get("model_name"),
                        ctx.queryParams().get("routing_group"))));
    r.patch("/workers/:id")
        .handler(
            ctx -> {
              byte[] body = jsonBody(ctx);
              answer(ctx, ops.patchWorker(workerId(ctx), body));
            });
    r.delete("/workers/:id").handler(ctx -> answer(ctx, ops.deleteWorker(workerId(ctx))));

    r.post("/select").handler(ctx -> select(ctx, false));
    r.post("/select_and_reserve").handler(ctx -> select(ctx, true));
    r.post("/reservations")
        .handler(
            ctx -> {
              countReservation(ctx, "reserve");
              answer(ctx, ops.reserve(jsonBody(ctx)));
            });
    r.post("/reservations/:id/prefill_complete")
        .handler(
            ctx -> {
              countReservation(ctx, "prefill_complete");
              answer(ctx, ops.prefillComplete(ctx.pathParam("id")));
            });
    r.post("/reservations/:id/output_block")
        .handler(
            ctx -> {
              countReservation(ctx, "output_block");
              Double fraction = decayFraction(ctx);
              answer(ctx, ops.outputBlock(ctx.pathParam("id"), fraction));
            });
    r.delete("/reservations/:id")
        .handler(
            ctx -> {
              countReservation(ctx, "free");
              answer(ctx, ops.free(ctx.pathParam("id")));
            });

    r.get("/health").handler(ctx -> respond(ctx, 200, ResponseJson.status("ok")));
    r.get("/ready")
        .handler(
            ctx -> {
              ReadyStatus s = service.ready();
              String held = cluster.notReadyReason();
              respond(
                  ctx,
                  s.ready() && held == null ? 200 : 503,
                  withCluster(ResponseJson.ready(s, recovery.get()), held));
            });
    r.get("/cluster")
        .handler(
            ctx ->
                respond(
                    ctx,
                    200,
                    new io.vertx.core.json.JsonObject(cluster.json()).toBuffer().getBytes()));
    r.get("/loads")
        .handler(
            ctx ->
                respond(
                    ctx,
                    200,
                    ResponseJson.loads(
                        service
                            .inspection()
                            .loads(
                                ctx.queryParams().get("model_name"),
                                ctx.queryParams().get("routing_group")))));
    r.post("/potential_loads")
        .handler(
            ctx ->
                respond(
                    ctx,
                    200,
                    ResponseJson.potentialLoads(
                        service
                            .inspection()
                            .potentialLoads(RequestParsers.select(jsonBodyView(ctx))))));
    r.post("/overlap_scores")
        .handler(
            ctx ->
                respond(
                    ctx,
                    200,
                    ResponseJson.overlapScores(
                        service
                            .inspection()
                            .overlapScores(RequestParsers.select(jsonBodyView(ctx))))));
    r.get("/dump")
        .handler(
            ctx ->
                vertx
                    .executeBlocking(
                        () -> ResponseJson.dump(service.inspection().dump(), this::watermarks),
                        false)
                    .onSuccess(b -> respond(ctx, 200, b))
                    .onFailure(ctx::fail));
    r.get("/metrics")
        .handler(
            ctx ->
                ctx.response()
                    .putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8")
                    .end(metrics.scrape()));

    r.post("/replica_sync/register_peer").handler(ctx -> replicaPeer(ctx, true));
    r.post("/replica_sync/deregister_peer").handler(ctx -> replicaPeer(ctx, false));
    r.get("/replica_sync/peers")
        .handler(
            ctx ->
                respond(
                    ctx,
                    200,
                    new io.vertx.core.json.JsonArray(
                            replica == null ? java.util.List.of() : replica.peers())
                        .toBuffer()
                        .getBytes()));
  }

  /**
   * {@code /ready}'s body with the additive {@code cluster} field (enabled, state, members) and,
   * while the cluster holds readiness ({@code held}: a joiner's recovery), {@code ready: false}
   * with that {@code reason}.
   */
  private byte[] withCluster(byte[] ready, String held) {
    io.vertx.core.json.JsonObject body = new io.vertx.core.json.JsonObject(Buffer.buffer(ready));
    if (held != null) {
      body.put("ready", false).put("reason", held);
    }
    return body.put("cluster", new io.vertx.core.json.JsonObject(cluster.readyJson()))
        .toBuffer()
        .getBytes();
  }

  /** Last applied sequence number of every listening rank of a partition (additive /dump field). */
  private Map<WorkerRank, Long> watermarks(PartitionKey key) {
    if (events == null) {
      return Map.of();
    }
    Map<WorkerRank, RankStats> stats = events.stats();
    Map<WorkerRank, Long> out = new HashMap<>();
    for (WorkerRecord w : service.listWorkers(key.modelName(), key.routingGroup())) {
      for (WorkerRank r : w.ranks()) {
        RankStats st = stats.get(r);
        if (st != null && st.lastSeq() >= 0) {
          out.put(r, st.lastSeq());
        }
      }
    }
    return out;
  }

  private void select(RoutingContext ctx, boolean reserve) {
    String kind = reserve ? "select_and_reserve" : "select";
    long started = System.nanoTime();
    ctx.addBodyEndHandler(
        v -> metrics.selection(kind, ctx.response().getStatusCode(), System.nanoTime() - started));
    BodyBytes body = jsonBodyView(ctx);
    // a request parked in the router queue leaves it when its client goes away
    CompletableFuture<Void> gone = new CompletableFuture<>();
    ctx.response().closeHandler(v -> gone.complete(null));
    answer(ctx, ops.select(body, ctx.request().getHeader(POLICY_CLASS_HEADER), reserve, gone));
  }

  private void countReservation(RoutingContext ctx, String op) {
    ctx.addBodyEndHandler(v -> metrics.reservation(op, ctx.response().getStatusCode()));
  }

  /** Dynamo's answers: 201 added / 200 present or removed / 404 unknown / 400 / 409 disabled / 503. */
  private void replicaPeer(RoutingContext ctx, boolean register) {
    String endpoint = ApiOperations.replicaEndpoint(jsonBody(ctx));
    if (replica == null) {
      throw SelectionException.conflict(
          "replica sync is disabled (start with --replica-sync-port)");
    }
    io.kvselect.server.sync.replica.ReplicaSync.PeerChange change;
    try {
      change = register ? replica.register(endpoint) : replica.deregister(endpoint);
    } catch (IllegalArgumentException e) {
      throw SelectionException.badRequest(e.getMessage());
    } catch (IllegalStateException e) {
      throw SelectionException.notReady(e.getMessage());
    }
    switch (change) {
      case ADDED -> respond(ctx, 201, "{\"status\":\"ok\"}".getBytes());
      case NOT_FOUND -> respond(ctx, 404, "{\"error\":\"peer not found\"}".getBytes());
      default -> respond(ctx, 200, "{\"status\":\"ok\"}".getBytes());
    }
  }

  /** Dynamo's replica sync behind {@code /replica_sync/*}; null answers them as disabled. */
  Routes replicaSync(io.kvselect.server.sync.replica.ReplicaSync r) {
    this.replica = r;
    return this;
  }

  /** The optional {@code {"decay_fraction": f}} body of output_block; an empty body means none. */
  private static Double decayFraction(RoutingContext ctx) {
    RequestBody b = ctx.body();
    if (b == null || b.buffer() == null || b.buffer().length() == 0) {
      return null;
    }
    return ApiOperations.decayFraction(jsonBody(ctx));
  }

  /** The request body, after checking that it is declared as JSON (415 otherwise). */
  static byte[] jsonBody(RoutingContext ctx) {
    requireJson(ctx);
    RequestBody b = ctx.body();
    Buffer buf = b == null ? null : b.buffer();
    return buf == null ? new byte[0] : buf.getBytes();
  }

  /** As {@link #jsonBody}, reading the body's buffer in place ({@link BodyBytes#view}). */
  static BodyBytes jsonBodyView(RoutingContext ctx) {
    requireJson(ctx);
    RequestBody b = ctx.body();
    return BodyBytes.view(b == null ? null : b.buffer());
  }

  private static void requireJson(RoutingContext ctx) {
    if (!isJson(ctx.request().getHeader("content-type"))) {
      throw new SelectionException(
          ErrorCode.UNSUPPORTED_MEDIA_TYPE,
          "Expected request with `Content-Type: application/json`");
    }
  }

  static boolean isJson(String contentType) {
    if (contentType == null) {
      return false;
    }
    int semi = contentType.indexOf(';');
    String mime = (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase();
    return mime.equals(JSON) || (mime.startsWith("application/") && mime.endsWith("+json"));
  }

  private static long workerId(RoutingContext ctx) {
    String raw = ctx.pathParam("id");
    try {
      return Long.parseUnsignedLong(raw);
    } catch (NumberFormatException e) {
      throw SelectionException.badRequest(
          "invalid worker id in path: " + raw + " (expected an unsigned 64-bit integer)");
    }
  }

  /**
   * Answers with the operation's status and body once it completes, back on the handler's
   * context (a clustered stage may complete on another thread); a failed stage goes to the
   * failure handler.
   */
  private void answer(RoutingContext ctx, CompletionStage<ApiOperations.Result> stage) {
    Future.fromCompletionStage(stage, vertx.getOrCreateContext())
        .onComplete(
            ar -> {
              if (ar.failed()) {
                ctx.fail(SelectionException.unwrap(ar.cause()));
                return;
              }
              respond(ctx, ar.result().status(), ar.result().body());
            });
  }

  private static void respond(RoutingContext ctx, int status, byte[] body) {
    ctx.response().setStatusCode(status).putHeader("content-type", JSON).end(Buffer.buffer(body));
  }
}
