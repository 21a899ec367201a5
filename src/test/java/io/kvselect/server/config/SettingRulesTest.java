package io.kvselect.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The per-value rules on their own, labelled by whatever source the caller names: the layering
 * that picks the source is {@link NodeSettingsTest}'s.
 */
class SettingRulesTest {

  private static String error(Runnable r) {
    return assertThrows(CliException.class, r::run).getMessage();
  }

  @Test
  void integersAreWholeAndWithinTheirRange() {
    assertEquals(7L, SettingRules.integer("x", 7));
    assertEquals(7L, SettingRules.integer("x", 7L));
    assertEquals("x must be an integer", error(() -> SettingRules.integer("x", 7.5)));
    assertEquals("x must be an integer", error(() -> SettingRules.integer("x", "7")));
    assertEquals(5L, SettingRules.range("x", 5, 1, 5));
    assertEquals("x must be between 1 and 5, got 6", error(() -> SettingRules.range("x", 6, 1, 5)));
  }

  @Test
  void secondsAreFiniteAndPositive() {
    assertEquals(0.5, SettingRules.ttl("t", 0.5));
    assertEquals("t must be a finite number > 0, got 0.0", error(() -> SettingRules.ttl("t", 0)));
    assertEquals(
        "t must be a finite number > 0, got NaN", error(() -> SettingRules.ttl("t", Double.NaN)));
    assertEquals(
        "t must be a finite number > 0, got Infinity",
        error(() -> SettingRules.ttl("t", Double.POSITIVE_INFINITY)));
    assertEquals("t must be a number", error(() -> SettingRules.number("t", "1")));
  }

  @Test
  void hostsAreNonEmptyAndStripped() {
    assertEquals("a.b", SettingRules.host("h", " a.b "));
    assertEquals(
        "h must be a non-empty host name or address", error(() -> SettingRules.host("h", " ")));
    assertEquals(
        "h must be a non-empty host name or address", error(() -> SettingRules.host("h", 1)));
  }

  @Test
  void peersAreHttpUrlsOrTcpEndpoints() {
    assertEquals(List.of("https://a:1/p"), SettingRules.httpUrls("p", List.of(" https://a:1/p ")));
    assertEquals(
        "p entry 'http://' is not an http(s) URL",
        error(() -> SettingRules.httpUrls("p", List.of("http://"))));
    assertEquals(List.of("tcp://a:1"), SettingRules.tcpEndpoints("q", List.of("tcp://a:1")));
    for (String bad : List.of("tcp://a", "tcp://a:0", "tcp://a:1/x", "udp://a:1", "tcp://[")) {
      assertEquals(
          "q entry '" + bad + "' is not a tcp://host:port endpoint",
          error(() -> SettingRules.tcpEndpoints("q", List.of(bad))));
    }
    assertEquals(
        "q must be an array of strings", error(() -> SettingRules.strings("q", List.of(1))));
    assertEquals("q must be an array of strings", error(() -> SettingRules.strings("q", "a")));
  }

  @Test
  void aSectionIsAnObjectOrAbsent() {
    assertEquals(Map.of(), SettingRules.section(Map.of(), "http"));
    assertEquals(
        "config field http must be an object",
        error(() -> SettingRules.section(Map.of("http", 1), "http")));
  }

  @Test
  void namesAreChecked() {
    assertEquals(
        "--router-tracking-key-id must not be empty",
        error(() -> SettingRules.trackingFlags(null, " ")));
    SettingRules.trackingFlags(null, null);
    SettingRules.trackingKey("public-xxh3-v1", null, null);
    assertEquals(
        "--router-tracking-key-file /nonexistent/k is not a readable file",
        error(() -> SettingRules.trackingKey(SettingRules.KEYED, "/nonexistent/k", "e1")));
  }
}
