package io.kvselect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LauncherCommandsTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return Launcher.run(
        args,
        Map.of(),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void versionPrintsOneLineAndExitsZero() {
    assertEquals(0, run("--version"));
    String text = out.toString(StandardCharsets.UTF_8);
    assertTrue(text.startsWith("kvselect "), text);
    assertEquals(1, text.lines().count(), text);
  }

  @Test
  void helpListsTheEnvironmentAndExitsZero() {
    assertEquals(0, run("--help"));
    String text = out.toString(StandardCharsets.UTF_8);
    assertTrue(
        text.contains("DYN_ROUTER_QUEUE_TIMEOUT_SECS") && text.contains("KVSELECT_JAVA_OPTS"),
        text);
  }

  @Test
  void startupSummaryIsAFewShortLines() {
    var s =
        io.kvselect.server.config.NodeSettings.parse(
            new String[] {"--host", "127.0.0.1"}, Map.of());
    var lines = StartupSummary.lines(s, 8092);
    assertEquals("kvselect listening on http://127.0.0.1:8092", lines.get(0));
    assertTrue(lines.get(1).startsWith("mode: events"), lines.get(1));
    assertTrue(lines.stream().allMatch(l -> l.length() <= 120), lines.toString());
  }

  @Test
  void unknownVariableIsWarnedAboutAtStart() throws Exception {
    ch.qos.logback.classic.Logger log =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(Launcher.class);
    var appender =
        new ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent>();
    appender.start();
    log.addAppender(appender);
    try (var taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      int code =
          Launcher.run(
              new String[] {
                "--host", "127.0.0.1", "--port", Integer.toString(taken.getLocalPort())
              },
              Map.of("DYN_ROUTER_TEMPRATURE", "1"),
              new PrintStream(out, true, StandardCharsets.UTF_8),
              new PrintStream(err, true, StandardCharsets.UTF_8));
      assertEquals(Launcher.FAILED, code);
    } finally {
      log.detachAppender(appender);
    }
    assertEquals(
        java.util.List.of(
            "unknown environment variable DYN_ROUTER_TEMPRATURE is ignored (did you mean DYN_ROUTER_TEMPERATURE?)"),
        appender.list.stream()
            .filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
            .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
            .toList());
    assertTrue(
        err.toString(StandardCharsets.UTF_8).startsWith("kvselect: cannot listen on 127.0.0.1:"));
  }
}
