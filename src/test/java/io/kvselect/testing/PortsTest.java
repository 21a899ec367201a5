package io.kvselect.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** Ports handed to tests lie below the kernel's ephemeral range and were free when probed. */
class PortsTest {

  @Test
  void rangesLieBelowTheEphemeralRangeAndCanBeBound() throws IOException {
    int low = Ports.ephemeralLow();
    for (int i = 0; i < 20; i++) {
      int base = Ports.freeRange(5);
      assertTrue(base >= 10_000 && base + 5 <= low, base + " outside [10000, " + low + ")");
      for (int p = base; p < base + 5; p++) {
        try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
          assertTrue(s.isBound());
        }
      }
    }
  }

  @Test
  void anEphemeralBindNeverLandsOnAPortHandedOut() throws IOException {
    int low = Ports.ephemeralLow();
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      assertTrue(
          s.getLocalPort() >= low,
          "the kernel's ephemeral ports start at " + low + ": " + s.getLocalPort());
    }
    assertTrue(Ports.free() < low);
  }
}
