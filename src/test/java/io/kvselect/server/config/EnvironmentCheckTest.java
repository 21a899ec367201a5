package io.kvselect.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.config.RouterConfigLoader;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EnvironmentCheckTest {

  @Test
  void misspelledRouterAndLauncherVariablesAreReportedWithTheClosestName() {
    Map<String, String> env =
        Map.of(
            "DYN_ROUTER_TEMPRATURE", "0.5",
            "KVSELECT_JAVA_OPT", "-Xmx1g",
            "DYN_ROUTER_TEMPERATURE", "0.5",
            "KVSELECT_JAR", "x.jar",
            "DYN_ROUTER_QUEUE_TIMEOUT_SECS", "3",
            "PATH", "/usr/bin",
            "DYN_NAMESPACE", "other");
    assertEquals(
        List.of("DYN_ROUTER_TEMPRATURE", "KVSELECT_JAVA_OPT"), EnvironmentCheck.unknown(env));
    assertEquals(
        List.of(
            "unknown environment variable DYN_ROUTER_TEMPRATURE is ignored (did you mean DYN_ROUTER_TEMPERATURE?)",
            "unknown environment variable KVSELECT_JAVA_OPT is ignored (did you mean KVSELECT_JAVA_OPTS?)"),
        EnvironmentCheck.warnings(env));
  }

  @Test
  void everyVariableTheLoaderReadsIsKnown() {
    for (String name : RouterConfigLoader.environmentVariables()) {
      assertEquals(List.of(), EnvironmentCheck.unknown(Map.of(name, "1")), name);
    }
  }

  @Test
  void helpListsEveryVariableWithItsDefault() {
    String usage = NodeSettings.usage();
    for (String name : EnvironmentCheck.known()) {
      assertTrue(usage.contains(name), name);
    }
    assertTrue(
        usage.contains("DYN_ROUTER_TEMPERATURE")
            && usage
                .lines()
                .anyMatch(l -> l.contains("DYN_ROUTER_TEMPERATURE ") && l.endsWith("[0.0]")),
        usage);
    assertTrue(
        usage
            .lines()
            .anyMatch(
                l -> l.contains("DYN_ROUTER_TRACKING_HASH ") && l.endsWith("[public-xxh3-v1]")));
    assertTrue(usage.contains("--version"), usage);
  }

  @Test
  void helpShowsThePolicyChoicesAndNoKnobAsAnAnonymousAlias() {
    List<String> lines = NodeSettings.usage().lines().toList();
    assertEquals(
        "      one of kv, kvc, sticky, least_loaded, round_robin",
        after(lines, "KVSELECT_ROUTER_POLICY", "[kv]"));
    assertEquals(
        "      one of literal, net", after(lines, "KVSELECT_KVC_ADMIT_ACCOUNTING", "[literal]"));
    assertEquals(
        "      alias of DYN_ROUTER_USE_KV_EVENTS", after(lines, "DYN_USE_KV_EVENTS", "[true]"));
    after(lines, "KVSELECT_KVC_RHO", "[0.95]");
    String usage = String.join("\n", lines);
    assertTrue(lines.stream().anyMatch(l -> l.contains("--policy") && l.contains("kvc")), usage);
    assertFalse(usage.contains("alias of a knob above"), usage);
    for (String l : lines) {
      assertTrue(l.length() <= 80, "fits 80 columns: " + l);
    }
  }

  /** The line after the one naming {@code variable} with default {@code dflt}. */
  private static String after(List<String> lines, String variable, String dflt) {
    for (int i = 0; i + 1 < lines.size(); i++) {
      if (lines.get(i).startsWith("  " + variable + " ")) {
        assertTrue(lines.get(i).endsWith(" " + dflt), lines.get(i));
        return lines.get(i + 1);
      }
    }
    throw new AssertionError(variable + " not in --help");
  }

  @Test
  void versionFlagIsParsed() {
    NodeSettings s = NodeSettings.parse(new String[] {"--version"}, Map.of());
    assertTrue(s.version());
  }

  @Test
  void versionComesFromTheMavenDescriptor() throws Exception {
    String props = "artifactId=kvselect\ngroupId=io.kvselect\nversion=1.2.3\n";
    assertEquals(
        "1.2.3", Version.parse(new ByteArrayInputStream(props.getBytes(StandardCharsets.UTF_8))));
    assertEquals(Version.UNKNOWN, Version.parse(new ByteArrayInputStream(new byte[0])));
  }
}
