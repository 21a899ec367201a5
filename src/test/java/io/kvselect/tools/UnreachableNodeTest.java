package io.kvselect.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.kvselect.tools.demo.ConversationDemo;
import io.kvselect.tools.loadgen.QueueLoad;
import io.kvselect.tools.mock.MockerMain;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * Every tool that talks to a kvselect node, pointed at a loopback port where nothing listens,
 * fails with one line on stderr that names the tool, the URL it tried and the cause, and a
 * non-zero exit code; no stack trace. The demo names the engine it could not reach the same way.
 */
class UnreachableNodeTest {

  private String base;

  @BeforeEach
  void freePort() throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      base = "http://127.0.0.1:" + s.getLocalPort();
    }
  }

  /** The exit code and stderr of one run of {@code command} with {@code args}. */
  private record Run(int exit, String err) {}

  private static Run run(Callable<Integer> command, String... args) {
    PrintStream saved = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int exit;
    try {
      exit = new CommandLine(command).execute(args);
    } finally {
      System.setErr(saved);
    }
    return new Run(exit, buf.toString(StandardCharsets.UTF_8));
  }

  private static void assertOneLine(Run r, String tool, String url) {
    assertNotEquals(0, r.exit(), () -> "exit code; stderr: " + r.err());
    String err = r.err().strip();
    assertEquals(1, err.lines().count(), () -> "one line on stderr, got:\n" + r.err());
    assertTrue(err.startsWith(tool + ": cannot reach kvselect at " + url), err);
    assertTrue(err.endsWith(": connection refused"), err);
  }

  @Test
  @Timeout(60)
  void mockerRegisterNamesTheUrl() {
    Run r = run(new MockerMain(), "--register", base);
    assertOneLine(r, "kvselect-mocker", base + "/workers");
  }

  @Test
  @Timeout(60)
  void demoNamesTheUrl() {
    Run r = run(new ConversationDemo(), "--kvselect", base);
    assertOneLine(r, "kvselect-demo", base + "/select_and_reserve");
  }

  @Test
  @Timeout(60)
  void demoNamesTheEngineUrlWhenTheSelectedEngineIsDown() throws IOException {
    HttpServer node =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    byte[] selection =
        ("{\"worker_id\":1,\"dp_rank\":0,\"endpoint\":\"" + base + "\"}")
            .getBytes(StandardCharsets.UTF_8);
    node.createContext(
        "/select_and_reserve",
        ex -> {
          ex.getRequestBody().readAllBytes();
          ex.getResponseHeaders().add("content-type", "application/json");
          ex.sendResponseHeaders(200, selection.length);
          ex.getResponseBody().write(selection);
          ex.close();
        });
    node.start();
    try {
      Run r =
          run(
              new ConversationDemo(),
              "--kvselect",
              "http://127.0.0.1:" + node.getAddress().getPort());
      assertNotEquals(0, r.exit(), () -> "exit code; stderr: " + r.err());
      String err = r.err().strip();
      assertEquals(1, err.lines().count(), () -> "one line on stderr, got:\n" + r.err());
      assertEquals(
          "kvselect-demo: cannot reach engine at " + base + "/generate: connection refused", err);
    } finally {
      node.stop(0);
    }
  }

  @Test
  @Timeout(60)
  void queueLoadNamesTheUrl() {
    Run r =
        run(new QueueLoad(), "--url", base, "--rate", "1", "--duration", "1", "--connections", "1");
    assertOneLine(r, "kvselect-queueload", base + "/workers");
  }

  @Test
  @Timeout(60)
  void queueLoadWithoutRegisteringNamesTheMetricsUrl() {
    Run r = run(new QueueLoad(), "--url", base, "--no-register", "--rate", "1", "--duration", "1");
    assertOneLine(r, "kvselect-queueload", base + "/metrics");
  }
}
