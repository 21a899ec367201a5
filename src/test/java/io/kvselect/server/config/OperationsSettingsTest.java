package io.kvselect.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code operations} settings: defaults, config section, {@code KVSELECT_*} variables, flags. */
class OperationsSettingsTest {

  @TempDir Path dir;

  @Test
  void defaultsAreOffExceptTheOpenProbes() {
    OperationsSettings o = NodeSettings.parse(new String[0], Map.of()).operations();
    assertNull(o.authToken());
    assertEquals(List.of("health", "ready"), o.authOpen());
    assertEquals(false, o.tlsEnabled());
    assertNull(o.workersFile());
    assertEquals(2.0, o.workersFilePollSecs());
    assertEquals(10.0, o.drainTimeoutSecs());
    assertEquals(0.0, o.livenessGraceSecs());
    assertEquals(false, o.livenessEnabled());
  }

  @Test
  void fileThenEnvironmentThenFlags() throws Exception {
    Path config = dir.resolve("c.json");
    Files.writeString(
        config,
        "{\"operations\": {\"drain_timeout_secs\": 3, \"liveness_grace_secs\": 4,"
            + " \"workers_file_poll_secs\": 0.5, \"auth_open\": [\"metrics\"]}}");
    OperationsSettings o =
        NodeSettings.parse(new String[] {"--config", config.toString()}, Map.of()).operations();
    assertEquals(3.0, o.drainTimeoutSecs());
    assertEquals(4.0, o.livenessGraceSecs());
    assertEquals(0.5, o.workersFilePollSecs());
    assertEquals(List.of("metrics"), o.authOpen());
    o =
        NodeSettings.parse(
                new String[] {"--config", config.toString()},
                Map.of("KVSELECT_DRAIN_TIMEOUT_SECS", "5", "KVSELECT_LIVENESS_GRACE_SECS", "0"))
            .operations();
    assertEquals(5.0, o.drainTimeoutSecs());
    assertEquals(0.0, o.livenessGraceSecs());
    o =
        NodeSettings.parse(
                new String[] {"--config", config.toString(), "--drain-timeout-secs", "7"},
                Map.of("KVSELECT_DRAIN_TIMEOUT_SECS", "5"))
            .operations();
    assertEquals(7.0, o.drainTimeoutSecs());
  }

  @Test
  void badValuesNameTheirSource() throws Exception {
    assertEquals(
        "--drain-timeout-secs must be > 0 and <= 86400 seconds, got 0.0",
        message("--drain-timeout-secs", "0"));
    assertEquals(
        "--liveness-grace-secs must be between 0 (off) and 86400 seconds, got -1.0",
        message("--liveness-grace-secs", "-1"));
    assertEquals(
        "--workers-file-poll-secs must be > 0 and <= 86400 seconds, got 0.0",
        message("--workers-file-poll-secs", "0"));
    CliException e =
        assertThrows(
            CliException.class,
            () ->
                NodeSettings.parse(new String[0], Map.of("KVSELECT_LIVENESS_GRACE_SECS", "soon")));
    assertEquals(
        "KVSELECT_LIVENESS_GRACE_SECS must be a number of seconds, got 'soon'", e.getMessage());
    Path config = dir.resolve("c.json");
    Files.writeString(config, "{\"operations\": {\"drain_timeout\": 3}}");
    e =
        assertThrows(
            CliException.class,
            () -> NodeSettings.parse(new String[] {"--config", config.toString()}, Map.of()));
    assertEquals("config field operations.drain_timeout is not a known setting", e.getMessage());
    Files.writeString(config, "{\"operations\": {\"drain_timeout_secs\": \"3\"}}");
    e =
        assertThrows(
            CliException.class,
            () -> NodeSettings.parse(new String[] {"--config", config.toString()}, Map.of()));
    assertEquals(
        "config field operations.drain_timeout_secs must be a number of seconds", e.getMessage());
  }

  @Test
  void everyOperationsVariableIsKnownAndListedByHelp() {
    String usage = NodeSettings.usage();
    for (String name : OperationsDraft.VARIABLES) {
      assertTrue(EnvironmentCheck.known().contains(name), name);
      assertTrue(usage.lines().anyMatch(l -> l.trim().startsWith(name + " ")), name + "\n" + usage);
    }
    assertTrue(
        usage
            .lines()
            .anyMatch(l -> l.contains("KVSELECT_AUTH_OPEN ") && l.endsWith("[health,ready]")),
        usage);
    assertTrue(
        usage
            .lines()
            .anyMatch(l -> l.contains("KVSELECT_DRAIN_TIMEOUT_SECS ") && l.endsWith("[10.0]")),
        usage);
    for (String flag :
        List.of(
            "--auth-token-file",
            "--auth-open",
            "--tls-cert",
            "--tls-key",
            "--workers-file",
            "--workers-file-poll-secs",
            "--drain-timeout-secs",
            "--liveness-grace-secs")) {
      assertTrue(usage.contains(flag), flag);
    }
    assertEquals(
        List.of(
            "unknown environment variable KVSELECT_DRAIN_TIMEOUT is ignored"
                + " (did you mean KVSELECT_DRAIN_TIMEOUT_SECS?)"),
        EnvironmentCheck.warnings(Map.of("KVSELECT_DRAIN_TIMEOUT", "3")));
  }

  private static String message(String flag, String value) {
    return assertThrows(
            CliException.class, () -> NodeSettings.parse(new String[] {flag, value}, Map.of()))
        .getMessage();
  }
}
