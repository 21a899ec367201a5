package io.kvselect.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
    Map<String, String> env = Map.of(
        "DYN_ROUTER_TEMPRATURE", "0.5",
        "KVSELECT_JAVA_OPT", "-Xmx1g",
        "DYN_ROUTER_TEMPERATURE", "0.5",
        "KVSELECT_JAR", "x.jar",
        "DYN_ROUTER_QUEUE_TIMEOUT_SECS", "3",
        "PATH", "/usr/bin",
        "DYN_NAMESPACE", "other");
    assertEquals(List.of("DYN_ROUTER_TEMPRATURE", "KVSELECT_JAVA_OPT"), EnvironmentCheck.unknown(env));
    assertEquals(List.of(
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
    assertTrue(usage.contains("DYN_ROUTER_TEMPERATURE") && usage.lines()
        .anyMatch(l -> l.contains("DYN_ROUTER_TEMPERATURE ") && l.endsWith("[0.0]")), usage);
    assertTrue(usage.lines().anyMatch(l -> l.contains("DYN_ROUTER_TRACKING_HASH ") && l.endsWith("[public-xxh3-v1]")));
    assertTrue(usage.contains("--version"), usage);
  }

  @Test
  void versionFlagIsParsed() {
    NodeSettings s = NodeSettings.parse(new String[] {"--version"}, Map.of());
    assertTrue(s.version());
  }

  @Test
  void versionComesFromTheMavenDescriptor() throws Exception {
    String props = "artifactId=kvselect\ngroupId=io.kvselect\nversion=1.2.3\n";
    assertEquals("1.2.3", Version.parse(new ByteArrayInputStream(props.getBytes(StandardCharsets.UTF_8))));
    assertEquals(Version.UNKNOWN, Version.parse(new ByteArrayInputStream(new byte[0])));
  }
}
