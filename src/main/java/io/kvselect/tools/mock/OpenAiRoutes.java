package io.kvselect.tools.mock;

import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.function.Consumer;

/**
 * The OpenAI surface a vLLM pod has, on a mock engine: {@code POST /v1/chat/completions} and
 * {@code /v1/completions} (JSON, or SSE with {@code "stream": true}; {@code usage} with
 * {@code prompt_tokens_details.cached_tokens} from the engine's simulated prefix cache, in the
 * final JSON or, when streaming, in a last chunk as OpenAI sends it with
 * {@code stream_options.include_usage}), vLLM's render routes
 * ({@code /v1/chat/completions/render}, {@code /v1/completions/render} answering
 * {@code {"token_ids": [...]}}), {@code POST /tokenize} and {@code GET /health}.
 *
 * <p>The mock tokenizer ({@link #tokens}) gives one token per UTF-16 character of the prompt; a
 * chat is rendered as {@code role:content\n} per message, so a later turn's tokens extend an
 * earlier turn's, as a real chat template's do. Stateless; the engine runs the generations.
 */
final class OpenAiRoutes {

  /** Runs one generation on the engine: {@code prefilled} with the cached-token count after the prefill wait, {@code done} after decode. */
  interface Generator {
    void generate(
        int[] tokens,
        int outputTokens,
        Consumer<Integer> prefilled,
        Runnable done,
        Consumer<Throwable> failed);
  }

  private static final int DEFAULT_MAX_TOKENS = 16;
  private static final int MAX_OUTPUT = 4096;

  private final long workerId;
  private final Generator engine;

  OpenAiRoutes(long workerId, Generator engine) {
    this.workerId = workerId;
    this.engine = engine;
  }

  void mount(Router router) {
    router.get("/health").handler(ctx -> ctx.response().setStatusCode(200).end());
    router.post("/v1/chat/completions/render").handler(ctx -> renderAnswer(ctx, true));
    router.post("/v1/completions/render").handler(ctx -> renderAnswer(ctx, false));
    router
        .post("/tokenize")
        .handler(
            ctx -> {
              JsonObject body = body(ctx);
              int[] t = tokens(body, body.containsKey("messages"));
              ctx.response()
                  .putHeader("content-type", "application/json")
                  .end(
                      new JsonObject()
                          .put("count", t.length)
                          .put("max_model_len", 1 << 20)
                          .put("tokens", array(t))
                          .encode());
            });
    router.post("/v1/chat/completions").handler(ctx -> complete(ctx, true));
    router.post("/v1/completions").handler(ctx -> complete(ctx, false));
  }

  private void renderAnswer(RoutingContext ctx, boolean chat) {
    int[] t = tokens(body(ctx), chat);
    ctx.response()
        .putHeader("content-type", "application/json")
        .end(new JsonObject().put("token_ids", array(t)).encode());
  }

  /** The mock tokenizer: one token per UTF-16 character of the rendered prompt. */
  static int[] tokens(JsonObject body, boolean chat) {
    StringBuilder text = new StringBuilder();
    if (chat) {
      JsonArray messages = body.getJsonArray("messages");
      if (messages == null || messages.isEmpty()) {
        throw new IllegalArgumentException("messages must be a non-empty array");
      }
      for (int i = 0; i < messages.size(); i++) {
        if (!(messages.getValue(i) instanceof JsonObject m)
            || !(m.getValue("role") instanceof String role)) {
          throw new IllegalArgumentException("messages[" + i + "].role must be a string");
        }
        Object content = m.getValue("content");
        text.append(role)
            .append(':')
            .append(content instanceof String s ? s : content == null ? "" : content.toString())
            .append('\n');
      }
    } else {
      Object prompt = body.getValue("prompt");
      if (prompt instanceof JsonArray ids) {
        int[] out = new int[ids.size()];
        for (int i = 0; i < out.length; i++) {
          if (!(ids.getValue(i) instanceof Integer v) || v < 0) {
            throw new IllegalArgumentException("prompt[" + i + "] must be a token id");
          }
          out[i] = v;
        }
        return out;
      }
      if (!(prompt instanceof String s)) {
        throw new IllegalArgumentException("prompt must be a string or an array of token ids");
      }
      text.append(s);
    }
    return text.chars().toArray();
  }

  private void complete(RoutingContext ctx, boolean chat) {
    JsonObject body = body(ctx);
    int[] t = tokens(body, chat);
    Object max =
        body.getValue(
            chat && body.containsKey("max_completion_tokens")
                ? "max_completion_tokens"
                : "max_tokens");
    int out =
        max == null
            ? DEFAULT_MAX_TOKENS
            : max instanceof Integer n && n >= 0 && n <= MAX_OUTPUT ? n : -1;
    if (out < 0) {
      throw new IllegalArgumentException(
          "max_tokens must be an integer in [0, " + MAX_OUTPUT + "]");
    }
    boolean stream = Boolean.TRUE.equals(body.getValue("stream"));
    JsonObject streamOptions =
        body.getValue("stream_options") instanceof JsonObject o ? o : new JsonObject();
    boolean usageChunk = Boolean.TRUE.equals(streamOptions.getValue("include_usage"));
    String model = body.getValue("model") instanceof String m ? m : "mock";
    String id = (chat ? "chatcmpl-" : "cmpl-") + workerId + "-" + System.nanoTime();
    HttpServerResponse res = ctx.response();
    int[] cached = new int[1];
    engine.generate(
        t,
        out,
        c -> {
          cached[0] = c;
          if (stream && !res.ended()) {
            res.setChunked(true)
                .putHeader("content-type", "text/event-stream")
                .putHeader("cache-control", "no-cache");
            res.write("data: " + chunk(id, model, chat, "", false).encode() + "\n\n");
          }
        },
        () -> {
          if (res.ended()) {
            return;
          }
          JsonObject usage =
              new JsonObject()
                  .put("prompt_tokens", t.length)
                  .put("completion_tokens", out)
                  .put("total_tokens", t.length + out)
                  .put("prompt_tokens_details", new JsonObject().put("cached_tokens", cached[0]));
          String text = "tok ".repeat(out).strip();
          if (stream) {
            res.write("data: " + chunk(id, model, chat, text, true).encode() + "\n\n");
            if (usageChunk) {
              res.write(
                  "data: "
                      + new JsonObject()
                          .put("id", id)
                          .put("object", chat ? "chat.completion.chunk" : "text_completion")
                          .put("model", model)
                          .put("choices", new JsonArray())
                          .put("usage", usage)
                          .encode()
                      + "\n\n");
            }
            res.end("data: [DONE]\n\n");
            return;
          }
          JsonObject choice = new JsonObject().put("index", 0).put("finish_reason", "length");
          if (chat) {
            choice.put("message", new JsonObject().put("role", "assistant").put("content", text));
          } else {
            choice.put("text", text);
          }
          res.putHeader("content-type", "application/json")
              .end(
                  new JsonObject()
                      .put("id", id)
                      .put("object", chat ? "chat.completion" : "text_completion")
                      .put("model", model)
                      .put("choices", new JsonArray().add(choice))
                      .put("usage", usage)
                      .encode());
        },
        ctx::fail);
  }

  private static JsonObject chunk(
      String id, String model, boolean chat, String text, boolean last) {
    JsonObject choice =
        new JsonObject().put("index", 0).put("finish_reason", last ? "length" : null);
    if (chat) {
      choice.put(
          "delta",
          last ? new JsonObject().put("content", text) : new JsonObject().put("role", "assistant"));
    } else {
      choice.put("text", text);
    }
    return new JsonObject()
        .put("id", id)
        .put("object", chat ? "chat.completion.chunk" : "text_completion")
        .put("model", model)
        .put("choices", new JsonArray().add(choice));
  }

  private static JsonObject body(RoutingContext ctx) {
    JsonObject body = ctx.body().asJsonObject();
    if (body == null) {
      throw new IllegalArgumentException("a JSON object body is required");
    }
    return body;
  }

  private static JsonArray array(int[] t) {
    JsonArray a = new JsonArray();
    for (int x : t) {
      a.add(x);
    }
    return a;
  }
}
