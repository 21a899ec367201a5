package io.kvselect.server.bus;

import io.kvselect.server.config.NodeSettings;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A kvselect node deployed with {@link Kvselect#deploy} into a plain (non-clustered) Vert.x
 * instance the harness owns, in approximate mode, with its HTTP server on 127.0.0.1 and an
 * ephemeral port; driven over the event bus and over HTTP from the test thread.
 */
final class BusHarness implements AutoCloseable {

  static final long SEND_TIMEOUT_MS = 10_000;

  final Vertx vertx;
  final Kvselect kvselect;
  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** A bus answer: the reply body, or the failure code and message. */
  record Answer(
      Object body,
      int failureCode,
      String failureMessage,
      io.vertx.core.eventbus.ReplyFailure failureType) {
    boolean ok() {
      return failureType == null;
    }

    JsonObject json() {
      if (!ok()) {
        throw new AssertionError(
            "expected a reply, got failure " + failureCode + ": " + failureMessage);
      }
      return (JsonObject) body;
    }

    /** The failure's error envelope. */
    JsonObject envelope() {
      if (failureType != io.vertx.core.eventbus.ReplyFailure.RECIPIENT_FAILURE) {
        throw new AssertionError("expected a failure, got " + body);
      }
      return new JsonObject(failureMessage);
    }
  }

  /** An HTTP answer: status and raw body. */
  record HttpAnswer(int status, String body) {}

  /** {@code flags} are appended to {@code --host 127.0.0.1 --port 0}. */
  BusHarness(String... flags) throws Exception {
    vertx = Vertx.vertx();
    java.util.List<String> args =
        new java.util.ArrayList<>(java.util.List.of("--host", "127.0.0.1", "--port", "0"));
    args.addAll(java.util.List.of(flags));
    NodeSettings s =
        NodeSettings.parse(
            args.toArray(String[]::new),
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_TTL_SECS", "3600"));
    try {
      kvselect =
          Kvselect.deploy(vertx, s)
              .toCompletionStage()
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      vertx.close();
      throw e;
    }
  }

  Answer send(String address, Object body) throws Exception {
    return send(address, body, new DeliveryOptions());
  }

  Answer send(String address, Object body, DeliveryOptions options) throws Exception {
    options.setSendTimeout(SEND_TIMEOUT_MS);
    try {
      Message<Object> m =
          vertx
              .eventBus()
              .request(address, body, options)
              .toCompletionStage()
              .toCompletableFuture()
              .get(SEND_TIMEOUT_MS + 5_000, TimeUnit.MILLISECONDS);
      return new Answer(m.body(), 0, null, null);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ReplyException re) {
        return new Answer(null, re.failureCode(), re.getMessage(), re.failureType());
      }
      throw e;
    }
  }

  JsonObject ok(String address, Object body) throws Exception {
    return send(address, body).json();
  }

  HttpAnswer http(String method, String path, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + kvselect.httpPort() + path))
            .timeout(Duration.ofSeconds(20));
    if (body != null) {
      b.header("content-type", "application/json");
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new HttpAnswer(r.statusCode(), r.body());
  }

  /** A worker body: block size 4, one rank, in the default partition. */
  static JsonObject worker(long id) {
    return new JsonObject()
        .put("worker_id", id)
        .put("endpoint", "http://worker-" + id + ":8000")
        .put("block_size", 4);
  }

  @Override
  public void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }
}
