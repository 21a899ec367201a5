package io.kvselect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Runs {@code io.kvselect.server.Launcher} as {@code bin/kvselect} does, in its own JVM, against an
 * address it cannot listen on: it must end on its own with one line naming the address and the
 * cause, and a non-zero exit code.
 */
class LauncherStartFailureTest {

  private record Result(int exit, List<String> stderr) {}

  private static Result launch(String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Launcher.class.getName());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    try {
      boolean ended = p.waitFor(20, TimeUnit.SECONDS);
      if (!ended) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      assertTrue(ended, "the launcher did not exit within 20 s");
      String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
      return new Result(p.exitValue(), err.lines().filter(l -> !l.isBlank()).toList());
    } finally {
      p.destroyForcibly();
    }
  }

  @Test
  void portTakenFailsWithOneLineNamingAddressAndCause() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      Result r = launch("--host", "127.0.0.1", "--port", Integer.toString(port));
      assertNotEquals(0, r.exit());
      assertEquals(
          List.of("kvselect: cannot listen on 127.0.0.1:" + port + ": Address already in use"),
          r.stderr());
    }
  }

  @Test
  void unknownHostFailsWithOneLineNamingAddressAndCause() throws Exception {
    Result r = launch("--host", "999.1.1.1", "--port", "0");
    assertNotEquals(0, r.exit());
    assertEquals(1, r.stderr().size(), r.stderr().toString());
    String line = r.stderr().get(0);
    assertTrue(line.startsWith("kvselect: cannot listen on 999.1.1.1:0: "), line);
  }

  @Test
  void startFailureNamesAddressForBindException() {
    var s =
        io.kvselect.server.config.NodeSettings.parse(
            new String[] {"--host", "127.0.0.1", "--port", "7"}, java.util.Map.of());
    String line =
        Launcher.startFailure(
            s, new RuntimeException(new java.net.BindException("Address already in use")));
    assertEquals("cannot listen on 127.0.0.1:7: Address already in use", line);
  }
}
