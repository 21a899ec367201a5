package io.kvselect.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.EnvironmentCheck;
import io.kvselect.server.config.NodeSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The cluster settings: defaults, layering (file < environment < flags), validation messages, the Hazelcast config built from them. */
class ClusterSettingsTest {

  @TempDir Path dir;

  private static ClusterSettings parse(Map<String, String> env, String... args) {
    return NodeSettings.parse(args, env).cluster();
  }

  private static String error(Map<String, String> env, String... args) {
    return assertThrows(CliException.class, () -> NodeSettings.parse(args, env)).getMessage();
  }

  @Test
  void defaultsAreOffAndLoopback() {
    ClusterSettings c = parse(Map.of());
    assertFalse(c.enabled());
    assertEquals("kvselect", c.name());
    assertEquals(List.of("127.0.0.1"), c.members());
    assertEquals(5701, c.port());
    assertEquals("127.0.0.1", c.host());
    assertEquals(0, c.busPort());
  }

  @Test
  void flagsSetEverySetting() {
    ClusterSettings c =
        parse(
            Map.of(),
            "--cluster",
            "--cluster-name",
            "prod-a",
            "--cluster-members",
            "10.0.0.1:5701,node-2.example,10.0.0.3",
            "--cluster-port",
            "5801",
            "--cluster-host",
            "10.0.0.9",
            "--cluster-bus-port",
            "5901");
    assertEquals(
        new ClusterSettings(
            true,
            "prod-a",
            List.of("10.0.0.1:5701", "node-2.example", "10.0.0.3"),
            5801,
            "10.0.0.9",
            5901),
        c);
  }

  @Test
  void layersApplyFileThenEnvironmentThenFlags() throws Exception {
    Path file = dir.resolve("c.json");
    Files.writeString(
        file,
        "{\"cluster\": {\"enabled\": true, \"name\": \"from-file\", \"members\": [\"10.1.1.1\"],"
            + " \"port\": 6000, \"host\": \"10.1.1.2\", \"bus_port\": 6100}}");
    ClusterSettings fromFile = parse(Map.of(), "--config", file.toString());
    assertEquals(
        new ClusterSettings(true, "from-file", List.of("10.1.1.1"), 6000, "10.1.1.2", 6100),
        fromFile);
    Map<String, String> env =
        Map.of(
            "KVSELECT_CLUSTER_NAME",
            "from-env",
            "KVSELECT_CLUSTER_MEMBERS",
            "10.2.2.2:7000,10.2.2.3",
            "KVSELECT_CLUSTER_PORT",
            "7000",
            "KVSELECT_CLUSTER_HOST",
            "10.2.2.9",
            "KVSELECT_CLUSTER_BUS_PORT",
            "7200");
    ClusterSettings fromEnv = parse(env, "--config", file.toString());
    assertEquals(
        new ClusterSettings(
            true, "from-env", List.of("10.2.2.2:7000", "10.2.2.3"), 7000, "10.2.2.9", 7200),
        fromEnv);
    ClusterSettings fromFlags =
        parse(
            env,
            "--config",
            file.toString(),
            "--cluster-name",
            "from-flag",
            "--cluster-port",
            "7100");
    assertEquals("from-flag", fromFlags.name());
    assertEquals(7100, fromFlags.port());
    assertEquals("10.2.2.9", fromFlags.host());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--cluster-port|0|--cluster-port must be between 1 and 65535",
        "--cluster-port|65536|--cluster-port must be between 1 and 65535",
        "--cluster-host|node-1.example|--cluster-host must be an IPv4 address",
        "--cluster-host|300.1.1.1|--cluster-host must be an IPv4 address",
        "--cluster-members|10.0.0.1:0|--cluster-members entry '10.0.0.1:0' is not host or host:port",
        "--cluster-members|10.0.0.1:5701-5703|--cluster-members entry '10.0.0.1:5701-5703'",
        "--cluster-members|bad host|--cluster-members entry 'bad host'",
        "--cluster-name|two words|--cluster-name must be 1..128 printable ASCII characters",
        "--cluster-bus-port|-1|--cluster-bus-port must be between 0 and 65535",
      })
  void badFlagsAreRefusedNamingTheFlag(String flag, String value, String message) {
    String e = error(Map.of(), "--cluster", flag, value);
    assertTrue(e.startsWith(message), e);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "KVSELECT_CLUSTER_PORT|abc|KVSELECT_CLUSTER_PORT must be an integer port",
        "KVSELECT_CLUSTER_PORT|70000|KVSELECT_CLUSTER_PORT must be between 1 and 65535",
        "KVSELECT_CLUSTER_HOST|localhost|KVSELECT_CLUSTER_HOST must be an IPv4 address",
        "KVSELECT_CLUSTER_MEMBERS|10.0.0.1,,10.0.0.2|KVSELECT_CLUSTER_MEMBERS entry ''",
        "KVSELECT_CLUSTER_BUS_PORT|x|KVSELECT_CLUSTER_BUS_PORT must be an integer port",
      })
  void badVariablesAreRefusedNamingTheVariable(String name, String value, String message) {
    String e = error(Map.of(name, value), "--cluster");
    assertTrue(e.startsWith(message), e);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"cluster\": {\"enabled\": \"yes\"}}|config field cluster.enabled must be true or false",
        "{\"cluster\": {\"port\": \"5701\"}}|config field cluster.port must be an integer port",
        "{\"cluster\": {\"port\": 5701.5}}|config field cluster.port must be an integer port",
        "{\"cluster\": {\"members\": \"10.0.0.1\"}}|config field cluster.members must be an array of strings",
        "{\"cluster\": {\"members\": [\"10.0.0.1:x\"]}}|config field cluster.members entry '10.0.0.1:x'",
        "{\"cluster\": {\"host\": 1}}|config field cluster.host must be an IPv4 address",
        "{\"cluster\": {\"bus_port\": 70000}}|config field cluster.bus_port must be between 0 and 65535",
        "{\"cluster\": {\"name\": \"\"}}|config field cluster.name must be 1..128",
        "{\"cluster\": {\"hosts\": \"10.0.0.1\"}}|config field cluster.hosts is not a known setting",
        "{\"cluster\": true}|config field cluster must be an object",
      })
  void badConfigFieldsAreRefusedNamingTheField(String json, String message) throws Exception {
    Path file = dir.resolve("bad.json");
    Files.writeString(file, json);
    String e = error(Map.of(), "--config", file.toString());
    assertTrue(e.startsWith(message), e);
  }

  @Test
  void aClusterFlagOrVariableWithoutClusterIsRefused() {
    assertEquals(
        "--cluster-members requires --cluster (or cluster.enabled: true in the config file)",
        error(Map.of(), "--cluster-members", "10.0.0.1"));
    assertEquals(
        "KVSELECT_CLUSTER_NAME requires --cluster (or cluster.enabled: true in the config file)",
        error(Map.of("KVSELECT_CLUSTER_NAME", "x")));
  }

  @Test
  void theVariablesAreKnownAndListedInHelp() {
    Map<String, String> env =
        Map.of(
            "KVSELECT_CLUSTER_NAME",
            "a",
            "KVSELECT_CLUSTER_MEMBERS",
            "b",
            "KVSELECT_CLUSTER_PORT",
            "1",
            "KVSELECT_CLUSTER_HOST",
            "127.0.0.1",
            "KVSELECT_CLUSTER_BUS_PORT",
            "0",
            "KVSELECT_CLUSTER_NAMES",
            "typo");
    assertEquals(List.of("KVSELECT_CLUSTER_NAMES"), EnvironmentCheck.unknown(env));
    String help = NodeSettings.usage();
    for (String v : ClusterSettings.ENVIRONMENT) {
      assertTrue(help.contains(v), v + " missing from --help");
    }
    for (String flag :
        List.of(
            "--cluster ",
            "--cluster-name",
            "--cluster-members",
            "--cluster-port",
            "--cluster-host",
            "--cluster-bus-port")) {
      assertTrue(help.contains(flag), flag + " missing from --help");
    }
  }

  @Test
  void theHazelcastConfigComesFromClusterXmlWithTheSettingsApplied() {
    ClusterSettings s =
        new ClusterSettings(
            true, "kvs-x", List.of("127.0.0.1:6001", "127.0.0.2"), 6001, "127.0.0.1", 0);
    Config c = ClusterBootstrap.config(s, 321);
    assertEquals("kvs-x", c.getClusterName());
    assertEquals("false", c.getProperty("hazelcast.phone.home.enabled"));
    assertEquals(6001, c.getNetworkConfig().getPort());
    assertTrue(c.getNetworkConfig().isPortAutoIncrement());
    assertEquals(
        List.of("127.0.0.1"), List.copyOf(c.getNetworkConfig().getInterfaces().getInterfaces()));
    assertTrue(c.getNetworkConfig().getInterfaces().isEnabled());
    var join = c.getNetworkConfig().getJoin();
    assertFalse(join.getMulticastConfig().isEnabled());
    assertFalse(join.getAutoDetectionConfig().isEnabled());
    assertTrue(join.getTcpIpConfig().isEnabled());
    assertEquals(List.of("127.0.0.1:6001", "127.0.0.2"), join.getTcpIpConfig().getMembers());
    assertTrue(c.getMapConfig(ClusterBootstrap.SESSIONS_MAP).getBackupCount() >= 1);
    assertTrue(c.getMapConfig(ClusterBootstrap.PENDING_MAP).getBackupCount() >= 1);
    assertEquals(321, c.getMapConfig(ClusterBootstrap.PENDING_MAP).getEvictionConfig().getSize());
    assertTrue(c.getMapConfig("__vertx.haInfo").getBackupCount() >= 1);
    assertTrue(c.getMultiMapConfig("__vertx.subs").getBackupCount() >= 1);
  }

  @Test
  void aKubernetesFileNamedByThePropertyKeepsItsJoinAndGetsTheRest() throws Exception {
    Path file = dir.resolve("k8s-cluster.xml");
    // the snippet of docs/cluster.md, inside the jar's cluster.xml
    String xml =
        Files.readString(Path.of("cluster.xml"))
            .replace("<tcp-ip enabled=\"true\">", "<tcp-ip enabled=\"false\">")
            .replace(
                "<kubernetes enabled=\"false\"/>",
                "<kubernetes enabled=\"true\">\n"
                    + "        <namespace>inference</namespace>\n"
                    + "        <service-name>kvselect-hazelcast</service-name>\n"
                    + "      </kubernetes>");
    Files.writeString(file, xml);
    String before = System.getProperty(ClusterBootstrap.CONFIG_PROPERTY);
    System.setProperty(ClusterBootstrap.CONFIG_PROPERTY, file.toString());
    try {
      Config c =
          ClusterBootstrap.config(
              new ClusterSettings(true, "kvs-k", List.of("127.0.0.1"), 5701, "10.4.0.7", 0), 100);
      var join = c.getNetworkConfig().getJoin();
      assertTrue(join.getKubernetesConfig().isEnabled());
      assertEquals("kvselect-hazelcast", join.getKubernetesConfig().getProperty("service-name"));
      assertFalse(join.getTcpIpConfig().isEnabled(), "the member list is left as the file has it");
      assertEquals("kvs-k", c.getClusterName());
      assertEquals(
          List.of("10.4.0.7"), List.copyOf(c.getNetworkConfig().getInterfaces().getInterfaces()));
    } finally {
      if (before == null) {
        System.clearProperty(ClusterBootstrap.CONFIG_PROPERTY);
      } else {
        System.setProperty(ClusterBootstrap.CONFIG_PROPERTY, before);
      }
    }
  }

  @Test
  void clusterXmlCarriesNoVersionedSchemaLocation() throws Exception {
    String xml = Files.readString(Path.of("cluster.xml"));
    assertFalse(
        xml.contains("schemaLocation"), "Hazelcast 5.5+ warns about a versioned schema location");
    try (var in =
        ClusterBootstrap.class
            .getClassLoader()
            .getResourceAsStream(ClusterBootstrap.CONFIG_RESOURCE)) {
      assertEquals(
          xml,
          new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8),
          "the classpath cluster.xml is the top-level file");
    }
  }
}
