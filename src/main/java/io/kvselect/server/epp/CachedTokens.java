package io.kvselect.server.epp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The engine's own account of cache reuse in a response: {@code usage.prompt_tokens_details
 * .cached_tokens}, read from the final JSON body or from the {@code usage} chunk of a streamed
 * (SSE) body. Keeps only the last {@link #WINDOW} bytes, where the usage chunk is (OpenAI sends it
 * last, before {@code data: [DONE]}).
 *
 * <p>Not thread-safe: owned by the stream that feeds it.
 */
public final class CachedTokens {

  /** Bytes of the response's tail kept for the usage lookup. */
  static final int WINDOW = 64 * 1024;

  private static final ObjectMapper JSON = new ObjectMapper();

  private byte[] tail = new byte[0];

  /** Appends a response body chunk. */
  public void feed(byte[] chunk) {
    if (chunk.length >= WINDOW) {
      tail = java.util.Arrays.copyOfRange(chunk, chunk.length - WINDOW, chunk.length);
      return;
    }
    int keep = Math.min(tail.length, WINDOW - chunk.length);
    byte[] next = new byte[keep + chunk.length];
    System.arraycopy(tail, tail.length - keep, next, 0, keep);
    System.arraycopy(chunk, 0, next, keep, chunk.length);
    tail = next;
  }

  /** The cached-token figure of the body fed so far, or null when it carries none. */
  public EppMetrics.Observed cachedTokens() {
    String text = new String(tail, StandardCharsets.UTF_8);
    String[] lines = text.split("\n");
    for (int i = lines.length - 1; i >= 0; i--) {
      String line = lines[i].strip();
      if (line.startsWith("data:")) {
        line = line.substring(5).strip();
      }
      if (!line.startsWith("{") || !line.contains("cached_tokens")) {
        continue;
      }
      Long v = read(line);
      if (v != null) {
        return new EppMetrics.Observed(v);
      }
    }
    Long whole = text.strip().startsWith("{") ? read(text) : null;
    return whole == null ? null : new EppMetrics.Observed(whole);
  }

  private static Long read(String json) {
    try {
      JsonNode n =
          JSON.readTree(json).path("usage").path("prompt_tokens_details").path("cached_tokens");
      return n.isIntegralNumber() ? n.asLong() : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
