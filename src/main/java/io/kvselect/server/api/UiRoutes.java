package io.kvselect.server.api;

import io.kvselect.core.service.ReadyStatus;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.liveness.RetryingListenerWatch;
import io.kvselect.server.metrics.HistorySampler;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The operator-facing routes: the status page {@code /ui} (plain HTML, JS and CSS read once
 * from the jar; no CDN, no build step), its compact node summary {@code GET /ui/state}, and
 * {@code GET /ui/history}, the node's recent figures ({@link HistorySampler}) the page plots, and
 * {@code GET /openapi.json}, the OpenAPI 3.1 document of every route.
 *
 * <p>The page reads the catalog and listener state from {@code GET /workers}, the loads from
 * {@code GET /loads} and cluster members from {@code GET /cluster} when that route exists;
 * {@code /ui/state} adds what no other JSON route answers: bookings, pending selections, session bindings, queue
 * depths, index size, ingest totals and the node's clock (event ages are computed against it,
 * not against the browser's), and what kind of node answers: its version, its mode
 * ({@code events} or {@code approximate}), whether session affinity is on, and the scope of each
 * figure ({@link #scopes}); with {@code --epp-port}, the endpoint picker's figures
 * ({@link io.kvselect.server.epp.EppMetrics.Summary}).
 *
 * <p>Immutable after construction; handlers run on the HTTP verticle's event loop and only read
 * thread-safe service state.
 */
public final class UiRoutes {

  /**
   * The status page's static files. They hold no data (the page reads everything from the JSON
   * routes), so a node with a bearer token serves them without one and the page asks for the
   * token the first time a JSON route answers 401.
   */
  public static final java.util.Set<String> ASSETS =
      java.util.Set.of("/ui", "/ui/", "/ui/app.js", "/ui/app.css");

  private static final String JSON = "application/json";

  /** No inline script or style, nothing from another origin. */
  private static final String CSP =
      "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'";

  private final SelectionService service;
  private final KvEventsCoordinator events;
  private final Clock clock;
  private final boolean clustered;

  /** The node's sampler; answers null before the main verticle set it (then the history is empty). */
  private final java.util.function.Supplier<HistorySampler> history;

  /** Schedulable workers whose listener has been retrying past its grace ({@link RetryingListenerWatch}). */
  private final Supplier<List<RetryingListenerWatch.Warning>> warnings;

  private final boolean sharedLoads;

  /** The endpoint picker's figures; null when the picker is off. */
  private Supplier<io.kvselect.server.epp.EppMetrics.Summary> picker;

  private final String version = io.kvselect.server.config.Version.current();
  private final Buffer index = resource("ui/index.html");
  private final Buffer script = resource("ui/app.js");
  private final Buffer style = resource("ui/app.css");
  private final Buffer openApi = resource("openapi.json");

  /**
   * {@code events} is null when the node runs without KV-event ingestion; {@code clustered} when
   * the node is a Hazelcast cluster member; {@code sharedLoads} when peers' bookings reach this
   * node's loads (a cluster's load sync or Dynamo's replica sync).
   */
  UiRoutes(
      SelectionService service,
      KvEventsCoordinator events,
      Clock clock,
      boolean clustered,
      boolean sharedLoads,
      java.util.function.Supplier<HistorySampler> history,
      Supplier<List<RetryingListenerWatch.Warning>> warnings) {
    this.history = history;
    this.warnings = warnings;
    this.service = service;
    this.events = events;
    this.clock = clock;
    this.clustered = clustered;
    this.sharedLoads = sharedLoads;
  }

  /** Reports the endpoint picker's figures under {@code epp} (null: the picker is off); call before mounting. */
  UiRoutes picker(Supplier<io.kvselect.server.epp.EppMetrics.Summary> p) {
    this.picker = p;
    return this;
  }

  /** Scope of a figure on the page: what this process holds, or the whole cluster's. */
  static final String NODE = "node";

  static final String CLUSTER = "cluster";

  /** A clustered table's entries whose primary copy this member holds. */
  static final String OWNED = "owned";

  /**
   * The scope of each figure {@code /ui/state} and the page show: bookings, queues, the index and
   * ingest are always this node's; the catalog (schedulable workers) and the per-worker active
   * requests are the cluster's when peers share them; sessions and pending selections on a
   * cluster are the shared table's entries this member owns.
   */
  Map<String, String> scopes() {
    Map<String, String> m = new java.util.LinkedHashMap<>();
    m.put("schedulable_workers", clustered ? CLUSTER : NODE);
    m.put("bookings", NODE);
    m.put("pending_selections", clustered ? OWNED : NODE);
    m.put("sessions", clustered ? OWNED : NODE);
    m.put("index_blocks", NODE);
    m.put("ingest", NODE);
    m.put("queue_depths", NODE);
    m.put("active_requests", sharedLoads ? CLUSTER : NODE);
    if (picker != null) {
      m.put("epp", NODE);
    }
    return m;
  }

  void mount(Router r) {
    // these four paths must stay ASSETS: a node with a bearer token serves them without one
    r.get("/ui").handler(ctx -> asset(ctx, index, "text/html; charset=utf-8"));
    r.get("/ui/").handler(ctx -> asset(ctx, index, "text/html; charset=utf-8"));
    r.get("/ui/app.js").handler(ctx -> asset(ctx, script, "text/javascript; charset=utf-8"));
    r.get("/ui/app.css").handler(ctx -> asset(ctx, style, "text/css; charset=utf-8"));
    r.get("/ui/state")
        .handler(
            ctx ->
                ctx.response()
                    .putHeader("content-type", JSON)
                    .putHeader("cache-control", "no-store")
                    .end(Buffer.buffer(state())));
    r.get("/ui/history")
        .handler(
            ctx ->
                ctx.response()
                    .putHeader("content-type", JSON)
                    .putHeader("cache-control", "no-store")
                    .end(Buffer.buffer(history())));
    r.get("/openapi.json")
        .handler(ctx -> ctx.response().putHeader("content-type", JSON).end(openApi));
  }

  private static void asset(RoutingContext ctx, Buffer body, String type) {
    ctx.response()
        .putHeader("content-type", type)
        .putHeader("cache-control", "no-cache")
        .putHeader("x-content-type-options", "nosniff")
        .putHeader("content-security-policy", CSP)
        .end(body);
  }

  /** The node summary of {@code GET /ui/state}; see {@code NodeState} in openapi.json. */
  byte[] state() {
    ReadyStatus ready = service.ready();
    Map<String, Integer> queues = service.inspection().queueDepths();
    long indexBlocks = service.inspection().indexSize();
    Instant now = clock.instant();
    return ResponseJson.write(
        g -> {
          g.writeStartObject();
          g.writeStringField("now", now.toString());
          g.writeNumberField("now_ms", now.toEpochMilli());
          g.writeBooleanField("ready", ready.ready());
          g.writeNumberField("schedulable_workers", ready.schedulableWorkers());
          g.writeBooleanField("kv_events", events != null);
          g.writeStringField("version", version);
          g.writeStringField("mode", events != null ? "events" : "approximate");
          g.writeBooleanField("session_affinity", service.sessionAffinity() != null);
          g.writeBooleanField("clustered", clustered);
          g.writeObjectFieldStart("scopes");
          for (var e : scopes().entrySet()) {
            g.writeStringField(e.getKey(), e.getValue());
          }
          g.writeEndObject();
          g.writeNumberField("bookings", service.bookingCount());
          g.writeNumberField("pending_selections", service.pendingSelections());
          g.writeNumberField("sessions", service.sessionCount());
          g.writeNumberField("index_blocks", indexBlocks);
          g.writeArrayFieldStart("listener_warnings");
          for (RetryingListenerWatch.Warning w : warnings.get()) {
            g.writeStartObject();
            g.writeStringField("worker_id", Long.toUnsignedString(w.workerId()));
            g.writeNumberField("dp_rank", w.dpRank());
            g.writeNumberField("retrying_ms", w.retryingMillis());
            if (w.lastError() == null) {
              g.writeNullField("last_error");
            } else {
              g.writeStringField("last_error", w.lastError());
            }
            g.writeStringField("message", w.message());
            g.writeEndObject();
          }
          g.writeEndArray();
          g.writeObjectFieldStart("queue_depths");
          for (var e : queues.entrySet()) {
            g.writeNumberField(e.getKey(), e.getValue());
          }
          g.writeEndObject();
          if (events != null) {
            g.writeObjectFieldStart("ingest");
            g.writeNumberField("batches", events.batches());
            g.writeNumberField("applied_blocks", events.appliedBlocks());
            g.writeEndObject();
          }
          if (picker != null) {
            writePicker(g, picker.get());
          }
          g.writeEndObject();
        });
  }

  /** The {@code epp} object of {@code /ui/state}; see {@code NodeState.epp} in openapi.json. */
  private static void writePicker(
      com.fasterxml.jackson.core.JsonGenerator g, io.kvselect.server.epp.EppMetrics.Summary e)
      throws IOException {
    g.writeObjectFieldStart("epp");
    g.writeNumberField("streams_open", e.streamsOpen());
    g.writeNumberField("picks", e.picks());
    g.writeObjectFieldStart("immediate");
    for (var s : e.immediate().entrySet()) {
      g.writeNumberField(Integer.toString(s.getKey()), s.getValue());
    }
    g.writeEndObject();
    g.writeNumberField("decision_mean_ms", Math.round(e.decisionMeanMillis() * 1000) / 1000.0);
    g.writeObjectFieldStart("cached_tokens");
    g.writeNumberField("compared", e.matches() + e.over() + e.under());
    g.writeNumberField("matches", e.matches());
    g.writeNumberField("over", e.over());
    g.writeNumberField("under", e.under());
    g.writeNumberField("mean_error_tokens", Math.round(e.meanErrorTokens() * 100) / 100.0);
    g.writeEndObject();
    g.writeEndObject();
  }

  /** The recent history of {@code GET /ui/history}; see {@code NodeHistory} in openapi.json. */
  byte[] history() {
    HistorySampler h = history.get();
    List<HistorySampler.Sample> samples = h == null ? List.of() : h.samples();
    return ResponseJson.write(
        g -> {
          g.writeStartObject();
          g.writeNumberField("period_ms", HistorySampler.PERIOD_MS);
          g.writeNumberField("window_ms", HistorySampler.WINDOW_MS);
          g.writeArrayFieldStart("samples");
          for (HistorySampler.Sample s : samples) {
            g.writeStartObject();
            g.writeNumberField("t", s.atMs());
            g.writeNumberField(
                "selections_per_sec", Math.round(s.selectionsPerSec() * 1000) / 1000.0);
            if (Double.isNaN(s.cachedShare())) {
              g.writeNullField("cached_share");
            } else {
              g.writeNumberField("cached_share", Math.round(s.cachedShare() * 10_000) / 10_000.0);
            }
            if (s.p99Nanos() < 0) {
              g.writeNullField("decision_p99_ms");
            } else {
              g.writeNumberField("decision_p99_ms", Math.round(s.p99Nanos() / 1_000.0) / 1_000.0);
            }
            g.writeNumberField("queue_depth", s.queueDepth());
            g.writeObjectFieldStart("kv_event_age_ms");
            for (var e : new java.util.TreeMap<>(s.eventAgeMs()).entrySet()) {
              g.writeNumberField(e.getKey(), e.getValue());
            }
            g.writeEndObject();
            g.writeEndObject();
          }
          g.writeEndArray();
          g.writeEndObject();
        });
  }

  private static Buffer resource(String path) {
    try (InputStream in = UiRoutes.class.getClassLoader().getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + path + " in the jar");
      }
      return Buffer.buffer(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
