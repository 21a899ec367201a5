package io.kvselect.server.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The endpoint picker (Envoy {@code ext_proc} for the Gateway API Inference Extension): whether it
 * listens and how it turns a proxied OpenAI or Anthropic request into a selection. Immutable;
 * built by {@link EppDraft} from the config section {@code epp}, the {@code KVSELECT_EPP_*}
 * variables and the {@code --epp-*} flags.
 *
 * <p>Invariants after parsing: {@code port} null (off) or 0..65535 (0: an ephemeral port);
 * {@code renderUrl} null (the picked partition's worker endpoints render) or an absolute http(s)
 * URL without a trailing slash; {@code renderTimeoutSecs} in (0, 3600]; both header names
 * non-blank and lower case; {@code fallbacks} in 0..8; {@code maxBodyBytes} in 1 KiB..256 MiB.
 *
 * @param port the gRPC port of {@code ext_proc} and {@code grpc.health.v1}, or null when off
 * @param renderUrl base URL of a vLLM-compatible render server, or null
 * @param renderTimeoutSecs longest wait for one render call before a 504
 * @param routingGroupHeader request header naming the routing group (absent: {@code default})
 * @param sessionHeader request header naming the session id (absent: no session)
 * @param fallbacks how many other endpoints follow the pick in the destination list
 * @param maxBodyBytes largest request body buffered before a 413
 * @param injectTokenIds whether a text {@code /v1/completions} prompt is forwarded as its token ids
 */
public record EppSettings(
    Integer port,
    String renderUrl,
    double renderTimeoutSecs,
    String routingGroupHeader,
    String sessionHeader,
    int fallbacks,
    int maxBodyBytes,
    boolean injectTokenIds) {

  /** Whether the node runs the endpoint picker. */
  public boolean enabled() {
    return port != null;
  }

  public Duration renderTimeout() {
    return Duration.ofNanos((long) (renderTimeoutSecs * 1e9));
  }

  /** The {@code epp} section of {@code GET /config}. */
  public Map<String, Object> configJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("port", port);
    m.put("render_url", renderUrl);
    m.put("render_timeout_secs", renderTimeoutSecs);
    m.put("routing_group_header", routingGroupHeader);
    m.put("session_header", sessionHeader);
    m.put("fallbacks", fallbacks);
    m.put("max_body_bytes", maxBodyBytes);
    m.put("inject_token_ids", injectTokenIds);
    return m;
  }
}
