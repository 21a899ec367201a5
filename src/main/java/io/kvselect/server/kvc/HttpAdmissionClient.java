package io.kvselect.server.kvc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.kvc.AdmissionClient;
import io.kvselect.core.kvc.AdmitDecision;
import io.kvselect.core.kvc.KvcMode;
import io.kvselect.core.kvc.KvcRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The workers' {@code admission_endpoint} over HTTP: {@code POST {session_id, turn, input_tokens,
 * append_tokens}}, answered {@code {can_admit, mode, reason}}. Uses the JDK's asynchronous client
 * (its own selector thread; nothing blocks the caller). No answer within {@code timeout} is a
 * reject with reason {@code admission-timeout}; a connection failure, a non-2xx status or an
 * unreadable body a reject with reason {@code admission-error}.
 *
 * <p>Threading: immutable and thread-safe; stages complete on the client's threads.
 */
public final class HttpAdmissionClient implements AdmissionClient {

  /** The default RPC timeout: short, since a slow worker is treated as a busy one. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(250);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final Duration timeout;

  public HttpAdmissionClient(Duration timeout) {
    this.timeout = timeout;
    this.http =
        HttpClient.newBuilder()
            .connectTimeout(timeout)
            .version(HttpClient.Version.HTTP_1_1)
            .build();
  }

  @Override
  public CompletionStage<AdmitDecision> admit(String endpoint, KvcRequest r) {
    byte[] body;
    HttpRequest req;
    try {
      body =
          JSON.writeValueAsBytes(
              java.util.Map.of(
                  "session_id",
                  r.sessionId(),
                  "turn",
                  r.turn(),
                  "input_tokens",
                  r.inputTokens(),
                  "append_tokens",
                  r.appendTokens()));
      req =
          HttpRequest.newBuilder(URI.create(endpoint))
              .timeout(timeout)
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofByteArray(body))
              .build();
    } catch (Exception e) {
      return CompletableFuture.completedFuture(AdmitDecision.reject(AdmitDecision.RPC_ERROR));
    }
    return http.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray())
        .orTimeout(timeout.toMillis() * 2, java.util.concurrent.TimeUnit.MILLISECONDS)
        .handle(
            (resp, err) -> {
              if (err != null) {
                Throwable t =
                    err instanceof CompletionException && err.getCause() != null
                        ? err.getCause()
                        : err;
                return AdmitDecision.reject(
                    t instanceof HttpTimeoutException
                            || t instanceof java.util.concurrent.TimeoutException
                        ? AdmitDecision.TIMEOUT
                        : AdmitDecision.RPC_ERROR);
              }
              return decode(resp.statusCode(), resp.body(), r);
            });
  }

  /** Reads a worker's answer; anything unreadable is an {@code admission-error} reject. */
  static AdmitDecision decode(int status, byte[] body, KvcRequest r) {
    if (status / 100 != 2) {
      return AdmitDecision.reject(AdmitDecision.RPC_ERROR);
    }
    try {
      JsonNode n = JSON.readTree(body);
      if (n == null || !n.isObject() || !n.path("can_admit").isBoolean()) {
        return AdmitDecision.reject(AdmitDecision.RPC_ERROR);
      }
      if (!n.get("can_admit").booleanValue()) {
        String reason = n.path("reason").isTextual() ? n.get("reason").textValue() : "rejected";
        return AdmitDecision.reject(reason);
      }
      String mode =
          n.path("mode").isTextual() ? n.get("mode").textValue().toLowerCase(Locale.ROOT) : "";
      return AdmitDecision.admit(
          switch (mode) {
            case "direct" -> KvcMode.DIRECT;
            case "seed" -> KvcMode.SEED;
            case "reseed" -> KvcMode.RESEED;
            default -> AdmissionClient.modeFor(r);
          });
    } catch (java.io.IOException e) {
      return AdmitDecision.reject(AdmitDecision.RPC_ERROR);
    }
  }
}
