package io.kvselect.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * Loopback ports for tests that must name a port before something binds it (a Hazelcast member, a
 * child process, a port nobody listens on). A port found free may be taken by another process
 * before it is used; callers that bind it themselves retry or fail with the port in the message.
 * Stateless.
 */
public final class Ports {

  private Ports() {}

  /** A port that was free on 127.0.0.1 when probed. */
  public static int free() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** A base port whose next {@code n - 1} ports were free too when probed (Hazelcast member ports). */
  public static int freeRange(int n) throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      int base = free();
      boolean ok = base + n + 100 <= 65535;
      for (int i = 1; i < n && ok; i++) {
        try (ServerSocket s = new ServerSocket(base + i, 1, InetAddress.getLoopbackAddress())) {
          ok = s.isBound();
        } catch (IOException taken) {
          ok = false;
        }
      }
      if (ok) {
        return base;
      }
    }
    throw new IOException("no free range of " + n + " ports on 127.0.0.1");
  }
}
