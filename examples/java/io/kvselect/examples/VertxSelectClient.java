package io.kvselect.examples;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * How a JVM gateway calls kvselect with the Vert.x web client: choose and book a worker for a
 * prompt, send the request there (the gateway's own work), report the first token, free the
 * booking. Every call is non-blocking; compose the futures on the gateway's event loop.
 *
 * <p>Run it with the command in {@code examples/README.md}: the fat jar plus
 * {@code io.vertx:vertx-web-client} and {@code io.vertx:vertx-uri-template} on the class path,
 * then {@code NODE_URL TOKEN_IDS}, e.g. {@code http://127.0.0.1:8092 1,2,3,4}.
 *
 * <p>Immutable; one instance per web client, safe to share.
 */
public final class VertxSelectClient {

  /** kvselect answered with an error status: its {@code {"error": "..."}} message and the status. */
  public static final class KvselectException extends RuntimeException {
    public final int status;

    KvselectException(String what, int status, String message) {
      super(what + ": " + status + " " + message);
      this.status = status;
    }
  }

  private final WebClient client;
  private final String base;

  public VertxSelectClient(WebClient client, String baseUrl) {
    this.client = client;
    this.base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
  }

  /** {@code POST /select_and_reserve}: the chosen worker, with the booking under {@code selection_id}. */
  public Future<JsonObject> selectAndReserve(int[] tokenIds, String sessionId) {
    JsonArray tokens = new JsonArray();
    for (int t : tokenIds) {
      tokens.add(t);
    }
    JsonObject body = new JsonObject().put("selection_id", UUID.randomUUID().toString()).put("token_ids", tokens);
    if (sessionId != null) {
      body.put("session_id", sessionId);
    }
    return client.postAbs(base + "/select_and_reserve").sendJsonObject(body)
        .map(r -> json("POST /select_and_reserve", r));
  }

  /** {@code POST /reservations/{id}/prefill_complete}: the first token came back. */
  public Future<JsonObject> prefillComplete(String selectionId) {
    return client.postAbs(base + "/reservations/" + selectionId + "/prefill_complete").send()
        .map(r -> json("POST prefill_complete", r));
  }

  /** {@code DELETE /reservations/{id}}: the request ended or failed. */
  public Future<JsonObject> free(String selectionId) {
    return client.deleteAbs(base + "/reservations/" + selectionId).send().map(r -> json("DELETE reservation", r));
  }

  /**
   * One request's whole lifecycle; {@code sendToWorker} stands for the gateway forwarding the
   * request to the chosen endpoint. The booking is freed whether or not that succeeds.
   */
  public Future<JsonObject> route(int[] tokenIds, java.util.function.Function<JsonObject, Future<?>> sendToWorker) {
    return selectAndReserve(tokenIds, null).compose(choice -> {
      String id = choice.getString("selection_id");
      return sendToWorker.apply(choice)
          .compose(v -> prefillComplete(id))
          .eventually(() -> free(id))
          .map(v -> choice);
    });
  }

  private static JsonObject json(String what, HttpResponse<Buffer> r) {
    JsonObject body = r.body() == null || r.body().length() == 0 ? new JsonObject() : r.bodyAsJsonObject();
    if (r.statusCode() >= 400) {
      throw new KvselectException(what, r.statusCode(), body.getString("error", ""));
    }
    return body;
  }

  public static void main(String[] args) throws Exception {
    int code = run(args, System.out, System.err);
    if (code != 0) {
      System.exit(code);
    }
  }

  /** The command line: {@code [node URL] [comma-separated token ids]}; returns the exit code. */
  public static int run(String[] args, java.io.PrintStream out, java.io.PrintStream err) throws Exception {
    String node = args.length > 0 ? args[0] : "http://127.0.0.1:8092";
    int[] tokens = java.util.Arrays.stream((args.length > 1 ? args[1] : "1,2,3,4,5,6,7,8").split(","))
        .mapToInt(s -> Integer.parseInt(s.trim())).toArray();
    Vertx vertx = Vertx.vertx();
    try {
      WebClient web = WebClient.create(vertx, new WebClientOptions().setConnectTimeout(5_000));
      JsonObject choice = new VertxSelectClient(web, node)
          .route(tokens, c -> Future.succeededFuture())   // forward to c.getString("endpoint") here
          .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      out.println("worker " + choice.getLong("worker_id") + " rank " + choice.getInteger("dp_rank")
          + " at " + choice.getString("endpoint") + ", cached " + choice.getJsonObject("overlap").getLong("longest_matched")
          + " tokens");
      return 0;
    } catch (java.util.concurrent.ExecutionException e) {
      err.println("VertxSelectClient: " + node + ": " + e.getCause().getMessage());
      return 1;
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
