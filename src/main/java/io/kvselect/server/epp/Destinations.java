package io.kvselect.server.epp;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * The {@code host:port} a gateway sends a request to, from a worker's registered {@code endpoint}
 * (an http(s) URL or a bare {@code host:port}). A worker with DP ranks serves rank {@code r} on
 * its endpoint's port plus {@code r - data_parallel_start_rank}: an InferencePool's
 * {@code targetPorts[i]} is local rank {@code i} when the ports are consecutive. Stateless.
 */
public final class Destinations {

  private Destinations() {}

  /**
   * The destination of local rank {@code rankOffset} of a worker registered with {@code endpoint};
   * null when the endpoint names no host (it cannot be routed to). A URL without a port takes its
   * scheme's (80, 443).
   */
  public static String of(String endpoint, int rankOffset) {
    if (endpoint == null || endpoint.isBlank()) {
      return null;
    }
    String e = endpoint.strip();
    URI uri;
    try {
      uri = new URI(e.contains("://") ? e : "http://" + e);
    } catch (URISyntaxException ex) {
      return null;
    }
    String host = uri.getHost();
    if (host == null) {
      return null;
    }
    int port = uri.getPort();
    if (port < 0) {
      port = "https".equals(uri.getScheme()) ? 443 : 80;
    }
    port += rankOffset;
    if (port < 1 || port > 65535) {
      return null;
    }
    return host + ":" + port;
  }

  /** The host part of {@code host:port} (an IPv6 address keeps its brackets). */
  static String host(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    int bracket = hostPort.lastIndexOf(']');
    return colon > bracket ? hostPort.substring(0, colon) : hostPort;
  }

  /** Whether a subset entry names a port: {@code a.b.c.d:p} or {@code [v6]:p}, not a bare IPv6 address. */
  static boolean hasPort(String entry) {
    if (entry.startsWith("[")) {
      return entry.contains("]:");
    }
    return entry.indexOf(':') >= 0 && entry.indexOf(':') == entry.lastIndexOf(':');
  }

  /** A bare host entry as {@link #host} would write it (an IPv6 address gets its brackets). */
  static String bareHost(String entry) {
    return entry.indexOf(':') >= 0 && !entry.startsWith("[") ? "[" + entry + "]" : entry;
  }
}
