package io.kvselect.server.sync.replica;

import java.net.URI;
import java.net.URISyntaxException;

/** The ZMQ endpoint syntax of Dynamo's replica sync: peers, the PUB's bind host, a bound port. Stateless. */
final class ReplicaEndpoints {

  private ReplicaEndpoints() {}

  /** {@code *} for a wildcard host, a bracketed literal for IPv6, else the host. */
  static String bindHost(String host) {
    if (host == null
        || host.isBlank()
        || host.equals("0.0.0.0")
        || host.equals("::")
        || host.equals("*")) {
      return "*";
    }
    return host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
  }

  /**
   * Checks a peer endpoint ({@code tcp://host:port}); returns it stripped.
   *
   * @throws IllegalArgumentException naming the endpoint
   */
  static String valid(String raw) {
    if (raw != null) {
      try {
        URI uri = new URI(raw.strip());
        if ("tcp".equals(uri.getScheme())
            && uri.getHost() != null
            && uri.getPort() >= 1
            && uri.getPort() <= 65535
            && (uri.getRawPath() == null || uri.getRawPath().isEmpty())
            && uri.getRawQuery() == null
            && uri.getRawFragment() == null
            && uri.getUserInfo() == null) {
          return raw.strip();
        }
      } catch (URISyntaxException ignored) {
        // falls through
      }
    }
    throw new IllegalArgumentException(
        "invalid replica sync endpoint '" + raw + "' (expected tcp://host:port)");
  }

  /** The port of a bound endpoint such as {@code tcp://127.0.0.1:40123}. */
  static int boundPort(String endpoint) {
    int colon = endpoint == null ? -1 : endpoint.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalStateException("no bound endpoint reported: " + endpoint);
    }
    return Integer.parseInt(endpoint.substring(colon + 1));
  }
}
