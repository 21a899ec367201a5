package io.kvselect.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.config.CliException;
import io.kvselect.server.config.EnvironmentCheck;
import io.kvselect.server.config.NodeSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster.reconcile_interval_secs}: its default, the file, {@code KVSELECT_CLUSTER_RECONCILE_SECS}
 * and {@code --cluster-reconcile-secs} layers, bad values named, and the sync options derived
 * from it.
 */
class ReconcileSettingsTest {

  @TempDir Path dir;

  private static ClusterSettings parse(Map<String, String> env, String... args) {
    return NodeSettings.parse(args, env).cluster();
  }

  @Test
  void defaultsToFiveSecondsAndLayersFileEnvironmentFlag() throws Exception {
    assertEquals(5, parse(Map.of(), "--cluster").reconcileIntervalSecs());
    Path file = dir.resolve("c.json");
    Files.writeString(file, "{\"cluster\": {\"enabled\": true, \"reconcile_interval_secs\": 7}}");
    assertEquals(7, parse(Map.of(), "--config", file.toString()).reconcileIntervalSecs());
    Map<String, String> env = Map.of("KVSELECT_CLUSTER_RECONCILE_SECS", "9");
    assertEquals(9, parse(env, "--config", file.toString()).reconcileIntervalSecs());
    assertEquals(
        2,
        parse(env, "--config", file.toString(), "--cluster-reconcile-secs", "2")
            .reconcileIntervalSecs());
    assertEquals(
        7, parse(Map.of(), "--config", file.toString()).json().get("reconcile_interval_secs"));
  }

  @Test
  void badValuesNameTheirSource() throws Exception {
    CliException e =
        assertThrows(
            CliException.class,
            () -> parse(Map.of(), "--cluster", "--cluster-reconcile-secs", "0"));
    assertTrue(e.getMessage().contains("--cluster-reconcile-secs"), e.getMessage());
    e =
        assertThrows(
            CliException.class,
            () -> parse(Map.of("KVSELECT_CLUSTER_RECONCILE_SECS", "soon"), "--cluster"));
    assertTrue(e.getMessage().contains("KVSELECT_CLUSTER_RECONCILE_SECS"), e.getMessage());
    Path file = dir.resolve("bad.json");
    Files.writeString(
        file, "{\"cluster\": {\"enabled\": true, \"reconcile_interval_secs\": 99999}}");
    e = assertThrows(CliException.class, () -> parse(Map.of(), "--config", file.toString()));
    assertTrue(e.getMessage().contains("cluster.reconcile_interval_secs"), e.getMessage());
    e = assertThrows(CliException.class, () -> parse(Map.of(), "--cluster-reconcile-secs", "3"));
    assertTrue(e.getMessage().contains("requires --cluster"), e.getMessage());
  }

  @Test
  void theVariableIsKnownAndTheOptionsFollowTheInterval() {
    assertEquals(
        List.of(), EnvironmentCheck.unknown(Map.of("KVSELECT_CLUSTER_RECONCILE_SECS", "3")));
    assertTrue(NodeSettings.usage().contains("--cluster-reconcile-secs"));
    assertTrue(NodeSettings.usage().contains("KVSELECT_CLUSTER_RECONCILE_SECS"));
    PeerSyncOptions o =
        PeerSync.options(parse(Map.of(), "--cluster", "--cluster-reconcile-secs", "4"));
    assertEquals(Duration.ofSeconds(4), o.reconcileInterval());
    assertEquals(Duration.ofSeconds(4), o.deadGrace());
    assertEquals(Duration.ofSeconds(1), o.gapTimeout());
    assertEquals(
        Duration.ofMillis(500), PeerSyncOptions.withInterval(Duration.ofSeconds(1)).gapTimeout());
  }
}
