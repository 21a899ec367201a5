package io.kvselect.core.kvc;

import java.util.Objects;

/**
 * What Admit and Dispatch know of a request: its session, turn (0 = first), total input tokens
 * and the append (tokens not in the resident prefix).
 *
 * <p>Invariants: {@code turn >= 0}; {@code 0 <= appendTokens <= inputTokens}.
 */
public record KvcRequest(String sessionId, int turn, long inputTokens, long appendTokens) {

  public KvcRequest {
    Objects.requireNonNull(sessionId, "sessionId");
    if (turn < 0) {
      throw new IllegalArgumentException("turn must be >= 0, got " + turn);
    }
    if (inputTokens < 0 || appendTokens < 0 || appendTokens > inputTokens) {
      throw new IllegalArgumentException(
          "need 0 <= append_tokens (" + appendTokens + ") <= input_tokens (" + inputTokens + ")");
    }
  }
}
