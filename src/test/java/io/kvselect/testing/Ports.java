package io.kvselect.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports for tests that must name a port before something binds it (a Hazelcast member, a
 * child process, a port nobody listens on). A port found free may be taken by another process
 * before it is used; callers that bind it themselves retry or fail with the port in the message.
 *
 * <p>Ports are drawn at random from below the kernel's ephemeral range (Linux:
 * {@code /proc/sys/net/ipv4/ip_local_port_range}), never from inside it: a port inside it can be
 * handed to any {@code bind(0)} or outgoing connection of the same JVM between the probe and the
 * use. That happened: a test cluster's third member address was taken by a ZeroMQ socket of the
 * same test, the first member spent its whole join (over 60 s) reconnecting to a peer that answered
 * in another protocol, and the test timed out. Stateless.
 */
public final class Ports {

  private static final int LOWEST = 10_000;
  private static final int EPHEMERAL_LOW = ephemeralLow();

  private Ports() {}

  /** A port that was free on 127.0.0.1 when probed, below the ephemeral range. */
  public static int free() throws IOException {
    return freeRange(1);
  }

  /** A base port whose next {@code n - 1} ports were free too when probed (Hazelcast member ports). */
  public static int freeRange(int n) throws IOException {
    int highestBase = EPHEMERAL_LOW - n - 1;
    for (int attempt = 0; attempt < 200; attempt++) {
      int base = ThreadLocalRandom.current().nextInt(LOWEST, highestBase);
      boolean ok = true;
      for (int i = 0; i < n && ok; i++) {
        ok = isFree(base + i);
      }
      if (ok) {
        return base;
      }
    }
    throw new IOException(
        "no free range of "
            + n
            + " ports on 127.0.0.1 between "
            + LOWEST
            + " and "
            + EPHEMERAL_LOW);
  }

  /** The first port of the kernel's ephemeral range (32768 where it cannot be read). */
  static int ephemeralLow() {
    try {
      String[] range =
          Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
      int low = Integer.parseInt(range[0]);
      return low > LOWEST + 1_000 ? low : 32_768;
    } catch (IOException | RuntimeException unreadable) {
      return 32_768;
    }
  }

  private static boolean isFree(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return s.isBound();
    } catch (IOException taken) {
      return false;
    }
  }
}
