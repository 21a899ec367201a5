package io.kvselect.server.epp;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP render server on 127.0.0.1 and an ephemeral port, answering vLLM's
 * {@code POST /v1/chat/completions/render} and {@code /v1/completions/render} with
 * {@code {"token_ids": [...]}}: one token per character of {@code role:content\n} per message (or
 * of the prompt), so a later turn's tokens extend an earlier turn's. The {@code model} chooses a
 * failure: {@code render-500} answers 500, {@code render-400} answers 400 with an OpenAI error,
 * {@code render-slow} answers after two seconds.
 */
final class RenderServer implements AutoCloseable {

  private final Vertx vertx = Vertx.vertx();
  private final HttpServer server;
  final AtomicInteger calls = new AtomicInteger();

  RenderServer() throws Exception {
    server =
        vertx
            .createHttpServer()
            .requestHandler(
                req ->
                    req.body()
                        .onSuccess(
                            b -> {
                              calls.incrementAndGet();
                              JsonObject body = b.toJsonObject();
                              String model = body.getString("model", "");
                              if (model.equals("render-500")) {
                                req.response().setStatusCode(500).end("{\"error\":\"boom\"}");
                                return;
                              }
                              if (model.equals("render-400")) {
                                req.response()
                                    .setStatusCode(400)
                                    .end("{\"error\":{\"message\":\"prompt too long for model\"}}");
                                return;
                              }
                              StringBuilder text = new StringBuilder();
                              if (req.path().equals("/v1/chat/completions/render")) {
                                for (Object m : body.getJsonArray("messages")) {
                                  JsonObject msg = (JsonObject) m;
                                  text.append(msg.getString("role"))
                                      .append(':')
                                      .append(msg.getValue("content"))
                                      .append('\n');
                                }
                              } else if (req.path().equals("/v1/completions/render")) {
                                text.append(body.getString("prompt"));
                              } else {
                                req.response().setStatusCode(404).end();
                                return;
                              }
                              JsonArray ids = new JsonArray();
                              text.chars().forEach(ids::add);
                              String answer = new JsonObject().put("token_ids", ids).encode();
                              if (model.equals("render-slow")) {
                                vertx.setTimer(
                                    2_000,
                                    t ->
                                        req.response()
                                            .putHeader("content-type", "application/json")
                                            .end(answer));
                              } else {
                                req.response()
                                    .putHeader("content-type", "application/json")
                                    .end(answer);
                              }
                            }))
            .listen(0, "127.0.0.1")
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
  }

  String url() {
    return "http://127.0.0.1:" + server.actualPort();
  }

  @Override
  public void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
