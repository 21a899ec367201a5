package io.kvselect.server.security;

import java.util.Locale;
import java.util.Optional;

/** The start-up warning for a node that listens beyond loopback without a token. Stateless. */
public final class Exposure {

  private Exposure() {}

  /**
   * One warning line when {@code host} is not a loopback address or name and no token is set;
   * empty otherwise. Names are not resolved: only {@code localhost}, {@code 127.*} and {@code ::1}
   * count as loopback, so {@code 0.0.0.0} (every interface) and other names are warned about.
   */
  public static Optional<String> warning(String host, boolean authEnabled) {
    if (authEnabled || isLoopback(host)) {
      return Optional.empty();
    }
    return Optional.of(
        "listening on "
            + host
            + " (not loopback) without --auth-token-file: any host that"
            + " reaches this port can register workers and route requests");
  }

  static boolean isLoopback(String host) {
    String h = host.strip().toLowerCase(Locale.ROOT);
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    return h.equals("localhost")
        || h.startsWith("127.")
        || h.equals("::1")
        || h.equals("0:0:0:0:0:0:0:1");
  }
}
