package io.kvselect.core.service;

import java.util.List;
import java.util.Map;

/**
 * A request's structured session metadata ({@code session_context}); when present it wins over
 * the flat {@code session_id}. {@code agentHeaders} are preserved for policies, never interpreted.
 */
public record SessionContext(
    String sessionId,
    String parentSessionId,
    Boolean sessionFinal,
    String inputTrigger,
    Map<String, List<String>> agentHeaders) {

  public SessionContext {
    agentHeaders = agentHeaders == null ? Map.of() : Map.copyOf(agentHeaders);
  }
}
