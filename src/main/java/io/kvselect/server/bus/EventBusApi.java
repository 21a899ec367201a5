package io.kvselect.server.bus;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.server.api.ApiOperations;
import io.kvselect.server.api.HttpApiVerticle;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event-bus front-end of the selection service: one cluster-wide consumer per address of
 * {@link BusAddresses#API}. A request's {@code JsonObject} body is exactly the HTTP request body
 * (plus {@code selection_id} or {@code worker_id} where HTTP has them in the path); it runs
 * through the same {@link ApiOperations} path as HTTP and is answered with exactly the HTTP
 * response body as a {@code JsonObject} ({@code JsonArray} for the worker list), or failed with
 * {@code message.fail(httpStatus, errorEnvelope)}, the envelope being the HTTP error body as a
 * JSON string.
 *
 * <p>A body of another type than {@code JsonObject} (a {@code Buffer} or {@code String} holding
 * JSON is accepted as the HTTP body bytes; {@code null} is an empty body) fails with 415. Parsing
 * runs on the consumer's event loop, as HTTP parsing does on its own; every answer is sent from
 * the consumer's context, whatever thread completes the service's stage. Several instances may
 * be deployed; they share the service and hold no state of their own.
 */
public final class EventBusApi extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(EventBusApi.class);

  /** One operation: the message (for its headers) and its body as JSON bytes. */
  private interface Operation {
    CompletionStage<ApiOperations.Result> apply(Message<Object> m, byte[] body);
  }

  private final ApiOperations ops;
  private final List<MessageConsumer<Object>> consumers = new ArrayList<>();

  public EventBusApi(ApiOperations ops) {
    this.ops = ops;
  }

  @Override
  public Future<?> start() {
    register(
        BusAddresses.SELECT,
        (m, b) -> ops.select(b, m.headers().get(BusAddresses.POLICY_CLASS_HEADER), false, null));
    register(
        BusAddresses.SELECT_AND_RESERVE,
        (m, b) -> ops.select(b, m.headers().get(BusAddresses.POLICY_CLASS_HEADER), true, null));
    register(BusAddresses.RESERVE, (m, b) -> ops.reserve(b));
    register(
        BusAddresses.PREFILL_COMPLETE, (m, b) -> ops.prefillComplete(ApiOperations.selectionId(b)));
    register(
        BusAddresses.OUTPUT_BLOCK,
        (m, b) -> ops.outputBlock(ApiOperations.selectionId(b), ApiOperations.decayFraction(b)));
    register(BusAddresses.FREE, (m, b) -> ops.free(ApiOperations.selectionId(b)));
    register(
        BusAddresses.WORKERS_LIST,
        (m, b) -> {
          String[] f = ApiOperations.workerFilters(b);
          return ops.listWorkers(f[0], f[1]);
        });
    register(BusAddresses.WORKERS_GET, (m, b) -> ops.worker(ApiOperations.workerId(b)));
    register(BusAddresses.WORKERS_CREATE, (m, b) -> ops.createWorker(b));
    register(BusAddresses.WORKERS_PATCH, (m, b) -> ops.patchWorker(ApiOperations.workerId(b), b));
    register(BusAddresses.WORKERS_DELETE, (m, b) -> ops.deleteWorker(ApiOperations.workerId(b)));
    List<Future<Void>> done = new ArrayList<>();
    for (MessageConsumer<Object> c : consumers) {
      done.add(c.completion());
    }
    return Future.all(done);
  }

  @Override
  public Future<?> stop() {
    List<Future<Void>> done = new ArrayList<>();
    for (MessageConsumer<Object> c : consumers) {
      done.add(c.unregister());
    }
    return Future.all(done);
  }

  private void register(String address, Operation op) {
    consumers.add(vertx.eventBus().consumer(address, m -> handle(address, m, op)));
  }

  private void handle(String address, Message<Object> m, Operation op) {
    CompletionStage<ApiOperations.Result> stage;
    try {
      stage = op.apply(m, bodyBytes(m.body()));
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    Future.fromCompletionStage(stage, context)
        .onComplete(
            ar -> {
              if (ar.succeeded()) {
                m.reply(Json.decodeValue(Buffer.buffer(ar.result().body())));
                return;
              }
              ApiOperations.Failure f = ApiOperations.failure(ar.cause());
              if (f.status() >= 500 && f.status() != 503) {
                LOG.error("unexpected failure on {}", address, ar.cause());
              }
              m.fail(f.status(), new String(f.body(), StandardCharsets.UTF_8));
            });
  }

  /**
   * The HTTP body a message body stands for: a {@code JsonObject} (or {@code JsonArray}, which
   * the parsers refuse as HTTP does) encoded, a {@code Buffer} or {@code String} as is, null as
   * empty. A value that cannot be encoded as JSON is 422; any other type 415; more than HTTP's
   * body limit ({@link HttpApiVerticle#BODY_LIMIT} bytes) 413, as HTTP answers it.
   */
  static byte[] bodyBytes(Object body) {
    byte[] bytes = encoded(body);
    if (bytes.length > HttpApiVerticle.BODY_LIMIT) {
      throw new SelectionException(
          ErrorCode.PAYLOAD_TOO_LARGE,
          "request body exceeds the limit of " + HttpApiVerticle.BODY_LIMIT + " bytes");
    }
    return bytes;
  }

  private static byte[] encoded(Object body) {
    if (body == null) {
      return new byte[0];
    }
    if (body instanceof JsonObject || body instanceof JsonArray) {
      try {
        return (body instanceof JsonObject o ? o.toBuffer() : ((JsonArray) body).toBuffer())
            .getBytes();
      } catch (RuntimeException e) {
        throw new SelectionException(
            ErrorCode.UNPROCESSABLE,
            "the message body cannot be encoded as JSON: " + e.getMessage());
      }
    }
    if (body instanceof Buffer b) {
      return b.getBytes();
    }
    if (body instanceof String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    throw new SelectionException(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        "Expected a JsonObject message body, got " + body.getClass().getSimpleName());
  }
}
