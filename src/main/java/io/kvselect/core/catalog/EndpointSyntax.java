package io.kvselect.core.catalog;

import io.kvselect.core.error.SelectionException;

/**
 * Syntax of the ZMQ endpoints a registration names ({@code kv_events_endpoint(s)},
 * {@code replay_endpoint}): what a ZMQ {@code connect} accepts, checked before anything is stored,
 * so that a malformed endpoint is a 422 naming the field and never a half-applied registration.
 *
 * <ul>
 *   <li>{@code tcp://host:port}: {@code host} a DNS name (letters, digits, {@code - _ .}), an IPv4
 *       address or a bracketed IPv6 address, not the bind wildcard {@code *}; {@code port}
 *       1..65535 in decimal.
 *   <li>{@code ipc://path} and {@code inproc://name}: a non-empty rest without whitespace.
 * </ul>
 *
 * <p>Only the syntax is checked: whether the host resolves or anything listens is a runtime state
 * of the listener (it retries), not an error of the request. Stateless; O(length).
 */
public final class EndpointSyntax {

  private EndpointSyntax() {}

  /** Throws a 422 naming {@code field} when {@code endpoint} is non-null and malformed. */
  public static void require(String field, String endpoint) {
    String problem = problem(endpoint);
    if (problem != null) {
      throw SelectionException.unprocessable("invalid value for field `" + field + "`: " + problem);
    }
  }

  /** Why {@code endpoint} is malformed, or null when it is absent or well-formed. */
  public static String problem(String endpoint) {
    if (endpoint == null) {
      return null;
    }
    if (endpoint.startsWith("tcp://")) {
      return tcp(endpoint.substring("tcp://".length()), endpoint);
    }
    for (String scheme : new String[] {"ipc://", "inproc://"}) {
      if (endpoint.startsWith(scheme)) {
        String rest = endpoint.substring(scheme.length());
        if (rest.isEmpty() || rest.chars().anyMatch(Character::isWhitespace)) {
          return "expected " + scheme + "<name> without spaces, got " + quote(endpoint);
        }
        return null;
      }
    }
    return "expected tcp://host:port, ipc://path or inproc://name, got " + quote(endpoint);
  }

  /**
   * The host of a {@code tcp://} endpoint (brackets removed from IPv6), or null for another
   * scheme or a malformed endpoint.
   */
  public static String tcpHost(String endpoint) {
    if (endpoint == null || !endpoint.startsWith("tcp://") || problem(endpoint) != null) {
      return null;
    }
    String rest = endpoint.substring("tcp://".length());
    String host = rest.substring(0, rest.lastIndexOf(':'));
    return host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
  }

  private static String tcp(String rest, String endpoint) {
    int colon = rest.lastIndexOf(':');
    if (colon <= 0) {
      return "expected tcp://host:port, got " + quote(endpoint);
    }
    String host = rest.substring(0, colon);
    String port = rest.substring(colon + 1);
    if (port.isEmpty()
        || port.length() > 5
        || !port.chars().allMatch(c -> c >= '0' && c <= '9')
        || Integer.parseInt(port) < 1
        || Integer.parseInt(port) > 65_535) {
      return "port must be 1..65535, got " + quote(endpoint);
    }
    if (host.startsWith("[")) {
      String inner = host.endsWith("]") ? host.substring(1, host.length() - 1) : "";
      if (inner.isEmpty()
          || !inner.contains(":")
          || !inner.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
        return "malformed IPv6 host in " + quote(endpoint);
      }
      return null;
    }
    if (host.length() > 253
        || !host.chars()
            .allMatch(
                c ->
                    c < 128
                        && (Character.isLetterOrDigit(c) || c == '-' || c == '_' || c == '.'))) {
      return "malformed host in " + quote(endpoint);
    }
    return null;
  }

  private static String quote(String s) {
    String shown = s.length() > 120 ? s.substring(0, 120) + "..." : s;
    return '"' + shown + '"';
  }
}
