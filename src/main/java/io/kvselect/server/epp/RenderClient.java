package io.kvselect.server.epp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Turns a prompt into the token ids the engine will see by POSTing it to a vLLM-compatible render
 * route ({@code /v1/chat/completions/render}, {@code /v1/completions/render}), which answers
 * {@code {"token_ids": [...]}}. Failures map as the peers' pickers map them: unreachable 503, no
 * answer within the timeout 504, a 5xx 502, a 4xx 400 carrying the renderer's message.
 *
 * <p>Thread-safe; calls never block the caller (the JDK client's own threads complete the stage,
 * so callers hop back to their context before touching their state).
 */
public final class RenderClient {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient client;
  private final Duration timeout;

  public RenderClient(Duration timeout) {
    this.timeout = timeout;
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout)
            .build();
  }

  /** The token ids of {@code body} rendered at {@code baseUrl + api.renderPath()}. */
  public CompletionStage<int[]> render(String baseUrl, InferenceApi api, byte[] body) {
    HttpRequest req;
    try {
      req =
          HttpRequest.newBuilder(URI.create(baseUrl + api.renderPath()))
              .timeout(timeout)
              .header("content-type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofByteArray(body))
              .build();
    } catch (IllegalArgumentException e) {
      return CompletableFuture.failedFuture(
          new EppFailure(503, "render URL " + baseUrl + " is not usable: " + e.getMessage()));
    }
    return client
        .sendAsync(req, HttpResponse.BodyHandlers.ofByteArray())
        .handle(
            (r, e) -> {
              if (e != null) {
                throw failure(baseUrl, e);
              }
              return tokenIds(baseUrl, r.statusCode(), r.body());
            });
  }

  /** The failure of a call that got no answer. */
  static EppFailure failure(String baseUrl, Throwable e) {
    Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    if (c instanceof HttpTimeoutException) {
      return new EppFailure(504, "renderer " + baseUrl + " did not answer in time");
    }
    if (c instanceof IOException) {
      return new EppFailure(
          503, "renderer " + baseUrl + " is unreachable: " + c.getClass().getSimpleName());
    }
    return new EppFailure(502, "renderer " + baseUrl + " failed: " + c);
  }

  /** The token ids of a render answer, or the failure its status or body means. */
  static int[] tokenIds(String baseUrl, int status, byte[] body) {
    if (status >= 500) {
      throw new EppFailure(502, "renderer " + baseUrl + " answered " + status);
    }
    if (status >= 400) {
      throw new EppFailure(400, "renderer refused the prompt (" + status + "): " + message(body));
    }
    JsonNode ids;
    try {
      ids = JSON.readTree(body).get("token_ids");
    } catch (IOException | RuntimeException e) {
      ids = null;
    }
    if (ids == null || !ids.isArray()) {
      throw new EppFailure(502, "renderer " + baseUrl + " answered without a token_ids array");
    }
    int[] out = new int[ids.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode t = ids.get(i);
      if (!t.canConvertToInt() || !t.isIntegralNumber()) {
        throw new EppFailure(
            502, "renderer " + baseUrl + " answered a token id that is not an integer");
      }
      out[i] = t.asInt();
    }
    return out;
  }

  /** The renderer's error message: its JSON {@code error} ({@code message} inside an object), else the text. */
  private static String message(byte[] body) {
    try {
      JsonNode n = JSON.readTree(body);
      JsonNode err = n == null ? null : n.get("error");
      if (err != null && err.isObject() && err.get("message") != null) {
        return err.get("message").asText();
      }
      if (err != null) {
        return err.asText();
      }
    } catch (IOException | RuntimeException ignored) {
      // not JSON: the text itself
    }
    String s = new String(body, java.nio.charset.StandardCharsets.UTF_8).strip();
    return s.length() > 300 ? s.substring(0, 300) : s;
  }
}
