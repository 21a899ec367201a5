package io.kvselect.server.epp;

/**
 * The inference APIs whose requests the endpoint picker understands, by request path, and the
 * vLLM render route that turns each into the token ids the engine will see.
 */
public enum InferenceApi {
  /** OpenAI {@code /v1/chat/completions}, rendered by {@code /v1/chat/completions/render}. */
  CHAT_COMPLETIONS("/v1/chat/completions", "/v1/chat/completions/render"),
  /** OpenAI {@code /v1/completions}, rendered by {@code /v1/completions/render}. */
  COMPLETIONS("/v1/completions", "/v1/completions/render"),
  /** Anthropic {@code /v1/messages}, rendered as the equivalent chat completion. */
  MESSAGES("/v1/messages", "/v1/chat/completions/render");

  private final String path;
  private final String renderPath;

  InferenceApi(String path, String renderPath) {
    this.path = path;
    this.renderPath = renderPath;
  }

  public String path() {
    return path;
  }

  public String renderPath() {
    return renderPath;
  }

  /** The API of a request's {@code :path} (query string ignored), or null when it is none of these. */
  public static InferenceApi ofPath(String requestPath) {
    if (requestPath == null) {
      return null;
    }
    int q = requestPath.indexOf('?');
    String p = q < 0 ? requestPath : requestPath.substring(0, q);
    while (p.length() > 1 && p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    for (InferenceApi a : values()) {
      if (a.path.equals(p)) {
        return a;
      }
    }
    return null;
  }
}
