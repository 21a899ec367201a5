package io.kvselect.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The endpoint picker's settings: off by default, layered file < KVSELECT_EPP_* < flags, bad values named. */
class EppSettingsTest {

  @TempDir Path dir;

  @Test
  void offByDefault() {
    EppSettings e = NodeSettings.parse(new String[0], Map.of()).epp();
    assertFalse(e.enabled());
    assertNull(e.renderUrl());
    assertEquals(5.0, e.renderTimeoutSecs());
    assertEquals("x-kvselect-routing-group", e.routingGroupHeader());
    assertEquals("x-session-id", e.sessionHeader());
    assertEquals(2, e.fallbacks());
    assertFalse(e.injectTokenIds());
  }

  @Test
  void fileThenEnvironmentThenFlags() throws Exception {
    Path f = dir.resolve("c.json");
    Files.writeString(
        f,
        "{\"epp\":{\"port\":9002,\"render_url\":\"http://r:8000/\",\"session_header\":\"X-Conv\","
            + "\"fallbacks\":0}}");
    EppSettings fromFile =
        NodeSettings.parse(new String[] {"--config", f.toString()}, Map.of()).epp();
    assertTrue(fromFile.enabled());
    assertEquals(9002, fromFile.port());
    assertEquals("http://r:8000", fromFile.renderUrl(), "trailing slash dropped");
    assertEquals("x-conv", fromFile.sessionHeader(), "header names are lower case");
    assertEquals(0, fromFile.fallbacks());
    EppSettings env =
        NodeSettings.parse(
                new String[] {"--config", f.toString()},
                Map.of("KVSELECT_EPP_PORT", "9003", "KVSELECT_EPP_RENDER_TIMEOUT_SECS", "0.5"))
            .epp();
    assertEquals(9003, env.port());
    assertEquals(0.5, env.renderTimeoutSecs());
    EppSettings flags =
        NodeSettings.parse(
                new String[] {
                  "--config",
                  f.toString(),
                  "--epp-port",
                  "0",
                  "--epp-routing-group-header",
                  "x-tier",
                  "--epp-inject-token-ids"
                },
                Map.of("KVSELECT_EPP_PORT", "9003"))
            .epp();
    assertTrue(flags.injectTokenIds());
    assertEquals(0, flags.port());
    assertEquals("x-tier", flags.routingGroupHeader());
  }

  @Test
  void theConfigRoundTripsThroughGetConfig() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {"--epp-port", "9100", "--epp-render-url", "https://r"}, Map.of());
    @SuppressWarnings("unchecked")
    Map<String, Object> epp = (Map<String, Object>) s.configJson().get("epp");
    assertEquals(9100, epp.get("port"));
    assertEquals("https://r", epp.get("render_url"));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--epp-port | 70000 | --epp-port",
        "--epp-render-url | ftp://x | --epp-render-url",
        "--epp-render-url | not a url | --epp-render-url",
        "--epp-render-timeout-secs | 0 | --epp-render-timeout-secs",
        "--epp-session-header | a b | --epp-session-header",
        "--epp-fallbacks | 9 | --epp-fallbacks",
        "--epp-max-body-bytes | 10 | --epp-max-body-bytes",
      })
  void badFlagsAreNamed(String flag, String value, String named) {
    CliException e =
        assertThrows(
            CliException.class, () -> NodeSettings.parse(new String[] {flag, value}, Map.of()));
    assertTrue(e.getMessage().contains(named), e.getMessage());
  }

  @Test
  void badVariablesAndFieldsAreNamed() throws Exception {
    CliException env =
        assertThrows(
            CliException.class,
            () -> NodeSettings.parse(new String[0], Map.of("KVSELECT_EPP_PORT", "x")));
    assertTrue(env.getMessage().contains("KVSELECT_EPP_PORT"), env.getMessage());
    Path f = dir.resolve("bad.json");
    Files.writeString(f, "{\"epp\":{\"prt\":1}}");
    CliException field =
        assertThrows(
            CliException.class,
            () -> NodeSettings.parse(new String[] {"--config", f.toString()}, Map.of()));
    assertTrue(field.getMessage().contains("epp.prt"), field.getMessage());
  }

  @Test
  void theVariablesAreKnownAndInTheHelp() {
    assertTrue(
        EnvironmentCheck.unknown(Map.of("KVSELECT_EPP_PORT", "1", "KVSELECT_EPP_RENDER_URL", "x"))
            .isEmpty());
    String usage = NodeSettings.usage();
    assertTrue(usage.contains("--epp-port") && usage.contains("KVSELECT_EPP_RENDER_URL"), usage);
  }
}
