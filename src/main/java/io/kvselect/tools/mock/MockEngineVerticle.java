package io.kvselect.tools.mock;

import io.kvselect.core.events.KvEventBatch;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One mock engine over HTTP: owns its {@link MockEngine} (touched only on this verticle's event
 * loop) and its {@link KvEventPublisher} thread, which it starts in {@link #start()} and stops in
 * {@link #stop()}.
 *
 * <p>Routes: {@code POST /generate} (prefill and decode are waited out with timers, never by
 * blocking; blocks are stored and their events published after the prefill), {@code POST /clear}
 * ({@code AllBlocksCleared} on every rank), {@code POST /restart} (silent cache loss and sequence
 * numbers from 0, as a new engine process), {@code POST /admit} (the KVC-Router's admission RPC:
 * {@code {session_id, turn, input_tokens, append_tokens}} -> {@code {can_admit, mode, reason}},
 * decided by Algorithm 2 over the tokens each session left resident by its last
 * {@code /generate} carrying a {@code session_id}), {@code GET /state}, and the OpenAI surface of a
 * vLLM pod ({@link OpenAiRoutes}: completions with streaming and cached-token usage, the render
 * routes, {@code /tokenize}, {@code /health}). Errors answer
 * {@code {"error": "..."}} with status 400 for bad input.
 */
public final class MockEngineVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(MockEngineVerticle.class);
  private static final long BODY_LIMIT = 16L * 1024 * 1024;

  private final MockerOptions options;
  private final int index;
  private final long workerId;
  private MockEngine engine;

  /** Sessions resident on this engine, for {@code /admit}; confined to this verticle's event loop. */
  private final io.kvselect.core.kvc.ResidentModel sessions =
      new io.kvselect.core.kvc.ResidentModel();

  private static final io.kvselect.core.index.WorkerRank SELF =
      new io.kvselect.core.index.WorkerRank(0, 0);
  private KvEventPublisher publisher;
  private HttpServer server;
  private volatile EngineInfo info;

  /** Engine number {@code index} of the fleet described by {@code options}. */
  public MockEngineVerticle(MockerOptions options, int index) {
    this.options = options;
    this.index = index;
    this.workerId = options.workerId(index);
  }

  /** The advertised endpoints; null until the verticle has started. */
  public EngineInfo info() {
    return info;
  }

  @Override
  public Future<?> start() {
    engine =
        new MockEngine(
            options.dpSize(), options.numGpuBlocks(), options.blockSize(), options.timing());
    publisher =
        new KvEventPublisher(
            "kvselect-mock-zmq-" + workerId,
            options.host(),
            options.pubPorts(index),
            options.replayPort(index),
            options.topic(),
            options.replayLayout());
    Router router = Router.router(vertx);
    router.route().handler(BodyHandler.create(false).setBodyLimit(BODY_LIMIT));
    router.post("/generate").handler(this::generate);
    router.post("/clear").handler(this::clear);
    router.post("/admit").handler(this::admit);
    router.post("/restart").handler(this::restart);
    router.get("/state").handler(this::state);
    new OpenAiRoutes(workerId, this::generateOpenAi).mount(router);
    router.route().failureHandler(this::failure);
    server =
        vertx.createHttpServer(
            new HttpServerOptions().setHost(options.host()).setPort(options.httpPort(index)));
    return Future.fromCompletionStage(publisher.ready(), context)
        .compose(
            eps ->
                server
                    .requestHandler(router)
                    .listen()
                    .map(
                        s -> {
                          info = describe(eps, s.actualPort());
                          return s;
                        }))
        .onFailure(
            err ->
                vertx.executeBlocking(
                    () -> {
                      publisher.close();
                      return null;
                    },
                    false));
  }

  @Override
  public Future<?> stop() {
    Future<Void> closed = server == null ? Future.succeededFuture() : server.close();
    return closed.eventually(
        () ->
            vertx.executeBlocking(
                () -> {
                  publisher.close();
                  return null;
                },
                false));
  }

  private EngineInfo describe(KvEventPublisher.Endpoints eps, int httpPort) {
    String host = options.advertisedHost();
    Map<Integer, String> events = new TreeMap<>();
    for (int r = 0; r < eps.publishers().size(); r++) {
      events.put(r, advertised(eps.publishers().get(r), host));
    }
    String replay = eps.replay() == null ? null : advertised(eps.replay(), host);
    return new EngineInfo(
        workerId,
        "http://" + host + ":" + httpPort,
        Collections.unmodifiableMap(events),
        replay,
        options.dpSize(),
        options.blockSize(),
        options.numGpuBlocks());
  }

  private static String advertised(String bound, String host) {
    return "tcp://" + host + ":" + bound.substring(bound.lastIndexOf(':') + 1);
  }

  private void generate(RoutingContext ctx) {
    JsonObject body = ctx.body().asJsonObject();
    if (body == null) {
      throw new IllegalArgumentException("a JSON object body is required");
    }
    MockEngine.Prompt prompt =
        new MockEngine.Prompt(
            tokens(body), optString(body, "lora_name"), optString(body, "cache_salt"));
    int outputTokens = optInt(body, "output_tokens", 0);
    Integer dpRank = body.getValue("dp_rank") == null ? null : optInt(body, "dp_rank", 0);
    MockEngine.Plan plan = engine.admit(prompt, dpRank, outputTokens);
    TimingModel t = engine.timing();
    LOG.debug(
        "worker {} rank {}: {} cached, {} uncached tokens",
        workerId,
        plan.dpRank(),
        plan.cachedTokens(),
        plan.uncachedTokens());
    after(
        t.waitMs(plan.prefillMs()),
        () -> {
          KvEventBatch batch = engine.commit(plan, now());
          String session = optString(body, "session_id");
          if (session != null) {
            sessions.put(SELF, session, (long) prompt.tokens().length + outputTokens);
          }
          if (batch != null) {
            publisher.publish(plan.dpRank(), KvEventEncoder.encode(batch, options.wire()));
          }
          after(
              t.waitMs(plan.decodeMs()),
              () ->
                  json(
                      ctx,
                      new JsonObject()
                          .put("worker_id", workerId)
                          .put("dp_rank", plan.dpRank())
                          .put("cached_tokens", plan.cachedTokens())
                          .put("uncached_tokens", plan.uncachedTokens())
                          .put("prefill_ms", plan.prefillMs())
                          .put("decode_ms", plan.decodeMs())),
              ctx);
        },
        ctx);
  }

  /**
   * One generation for the OpenAI routes: the same admit, prefill wait, commit and publish as
   * {@code /generate}, reporting the cached tokens after the prefill and the end after the decode.
   */
  private void generateOpenAi(
      int[] tokens,
      int outputTokens,
      java.util.function.Consumer<Integer> prefilled,
      Runnable done,
      java.util.function.Consumer<Throwable> failed) {
    MockEngine.Plan plan;
    try {
      plan = engine.admit(new MockEngine.Prompt(tokens, null, null), null, outputTokens);
    } catch (RuntimeException e) {
      failed.accept(e);
      return;
    }
    TimingModel t = engine.timing();
    later(
        t.waitMs(plan.prefillMs()),
        () -> {
          KvEventBatch batch = engine.commit(plan, now());
          if (batch != null) {
            publisher.publish(plan.dpRank(), KvEventEncoder.encode(batch, options.wire()));
          }
          prefilled.accept(plan.cachedTokens());
          later(t.waitMs(plan.decodeMs()), done);
        });
  }

  private void later(long ms, Runnable r) {
    if (ms <= 0) {
      r.run();
    } else {
      vertx.setTimer(ms, id -> r.run());
    }
  }

  /** The admission RPC: Algorithm 2 with the original's defaults over this engine's KV capacity. */
  private void admit(RoutingContext ctx) {
    JsonObject body = ctx.body().asJsonObject();
    if (body == null) {
      throw new IllegalArgumentException("a JSON object body is required");
    }
    String session = optString(body, "session_id");
    if (session == null) {
      throw new IllegalArgumentException("session_id is required");
    }
    long input = optInt(body, "input_tokens", -1);
    long append = optInt(body, "append_tokens", -1);
    if (input < 0 || append < 0 || append > input) {
      throw new IllegalArgumentException(
          "input_tokens and append_tokens are required, 0 <= append_tokens <= input_tokens");
    }
    io.kvselect.core.kvc.AdmitDecision d =
        sessions.decide(
            SELF,
            new io.kvselect.core.kvc.KvcRequest(session, optInt(body, "turn", 0), input, append),
            (long) options.numGpuBlocks() * options.blockSize() * options.dpSize(),
            io.kvselect.core.kvc.KvcParams.defaults());
    JsonObject out = new JsonObject().put("can_admit", d.admitted());
    out.put("mode", d.admitted() ? d.mode().wire() : null);
    out.put("reason", d.reason());
    json(ctx, out);
  }

  private void clear(RoutingContext ctx) {
    sessions.removeWorker(SELF);
    for (int r = 0; r < engine.dpSize(); r++) {
      publisher.publish(r, KvEventEncoder.encode(engine.clear(r, now()), options.wire()));
    }
    json(ctx, new JsonObject().put("worker_id", workerId).put("cleared", true));
  }

  private void restart(RoutingContext ctx) {
    engine.restart();
    sessions.removeWorker(SELF);
    publisher.restart();
    json(ctx, new JsonObject().put("worker_id", workerId).put("restarted", true));
  }

  private void state(RoutingContext ctx) {
    JsonArray ranks = new JsonArray();
    for (int r = 0; r < engine.dpSize(); r++) {
      long seq = publisher.lastSeq(r);
      ranks.add(
          new JsonObject()
              .put("dp_rank", r)
              .put("cached_blocks", engine.cachedBlocks(r))
              .put("last_seq", seq < 0 ? null : seq));
    }
    json(ctx, new JsonObject().put("worker_id", workerId).put("ranks", ranks));
  }

  /** Runs {@code r} now ({@code ms} = 0) or on a timer; a timer's failure fails the request. */
  private void after(long ms, Runnable r, RoutingContext ctx) {
    if (ms <= 0) {
      r.run();
      return;
    }
    vertx.setTimer(
        ms,
        id -> {
          try {
            r.run();
          } catch (RuntimeException e) {
            ctx.fail(e);
          }
        });
  }

  private void failure(RoutingContext ctx) {
    Throwable t = ctx.failure();
    int status;
    String message;
    if (t instanceof IllegalArgumentException
        || t instanceof DecodeException
        || t instanceof ClassCastException) {
      status = 400;
      message = t.getMessage();
    } else if (t == null) {
      status = ctx.statusCode() > 0 ? ctx.statusCode() : 500;
      message = "request failed";
    } else {
      status = 500;
      message = t.toString();
      LOG.warn("worker {}: request failed", workerId, t);
    }
    ctx.response()
        .setStatusCode(status)
        .putHeader("content-type", "application/json")
        .end(new JsonObject().put("error", message).encode());
  }

  private static void json(RoutingContext ctx, JsonObject body) {
    if (!ctx.response().ended()) {
      ctx.response().putHeader("content-type", "application/json").end(body.encode());
    }
  }

  private static double now() {
    return System.currentTimeMillis() / 1000.0;
  }

  private static int[] tokens(JsonObject body) {
    JsonArray arr;
    try {
      arr = body.getJsonArray("token_ids");
    } catch (ClassCastException e) {
      throw new IllegalArgumentException("token_ids must be an array of integers");
    }
    if (arr == null) {
      throw new IllegalArgumentException("token_ids is required");
    }
    int[] out = new int[arr.size()];
    for (int i = 0; i < out.length; i++) {
      Object v = arr.getValue(i);
      if (!(v instanceof Integer || v instanceof Long)
          || ((Number) v).longValue() < 0
          || ((Number) v).longValue() > 0xFFFF_FFFFL) {
        throw new IllegalArgumentException(
            "token_ids[" + i + "] must be an integer in [0, 4294967295]");
      }
      out[i] = (int) ((Number) v).longValue();
    }
    return out;
  }

  private static int optInt(JsonObject body, String field, int dflt) {
    Object v = body.getValue(field);
    if (v == null) {
      return dflt;
    }
    if (!(v instanceof Integer) || (Integer) v < 0) {
      throw new IllegalArgumentException(field + " must be a non-negative integer");
    }
    return (Integer) v;
  }

  private static String optString(JsonObject body, String field) {
    Object v = body.getValue(field);
    if (v == null) {
      return null;
    }
    if (!(v instanceof String s)) {
      throw new IllegalArgumentException(field + " must be a string");
    }
    return s.isEmpty() ? null : s;
  }
}
