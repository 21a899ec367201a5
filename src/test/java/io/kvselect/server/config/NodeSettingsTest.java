package io.kvselect.server.config;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NodeSettingsTest {

  @TempDir Path dir;

  private static NodeSettings parse(String... args) {
    return NodeSettings.parse(args, Map.of());
  }

  private static String failure(Map<String, String> env, String... args) {
    CliException e = assertThrows(CliException.class, () -> NodeSettings.parse(args, env));
    assertFalse(e.getMessage().contains("\n"), e.getMessage());
    return e.getMessage();
  }

  private Path file(String name, String content) throws IOException {
    return Files.writeString(dir.resolve(name), content);
  }

  @Test
  void everyDefault() {
    NodeSettings s = parse();
    assertEquals("0.0.0.0", s.host());
    assertEquals(8092, s.port());
    assertEquals(4, s.threads());
    assertEquals(List.of(), s.indexerPeers());
    assertNull(s.replicaSyncPort());
    assertEquals(List.of(), s.replicaSyncPeers());
    assertNull(s.sessionAffinityTtlSecs());
    assertEquals(120.0, s.selectionCacheTtlSecs());
    assertEquals(4096, s.selectionCacheMaxEntries());
    assertEquals(268_435_456L, s.selectionCacheMaxBytes());
    assertEquals("public-xxh3-v1", s.routerTrackingHash());
    assertNull(s.routerTrackingKeyFile());
    assertNull(s.routerTrackingKeyId());
    assertNull(s.configFile());
    assertEquals(RouterConfig.DEFAULTS, s.router());
    assertFalse(s.help());
  }

  static Stream<Arguments> flags() {
    return Stream.of(
        Arguments.of(
            new String[] {"--host", "127.0.0.1"},
            (Function<NodeSettings, Object>) NodeSettings::host,
            "127.0.0.1"),
        Arguments.of(new String[] {"--port", "0"}, f(NodeSettings::port), 0),
        Arguments.of(new String[] {"--port=9000"}, f(NodeSettings::port), 9000),
        Arguments.of(new String[] {"--threads", "1"}, f(NodeSettings::threads), 1),
        Arguments.of(
            new String[] {"--indexer-peers", "http://a:8090,https://b.example/x"},
            f(NodeSettings::indexerPeers),
            List.of("http://a:8090", "https://b.example/x")),
        Arguments.of(
            new String[] {"--replica-sync-port", "9092"}, f(NodeSettings::replicaSyncPort), 9092),
        Arguments.of(
            new String[] {
              "--replica-sync-port",
              "9092",
              "--replica-sync-peers",
              "tcp://b:9092,tcp://10.0.0.3:9093"
            },
            f(NodeSettings::replicaSyncPeers),
            List.of("tcp://b:9092", "tcp://10.0.0.3:9093")),
        Arguments.of(
            new String[] {"--session-affinity-ttl-secs", "31536000"},
            f(NodeSettings::sessionAffinityTtlSecs),
            31_536_000L),
        Arguments.of(
            new String[] {"--session-affinity-ttl-secs", "1"},
            f(NodeSettings::sessionAffinityTtlSecs),
            1L),
        Arguments.of(
            new String[] {"--selection-cache-ttl-secs", "30"},
            f(NodeSettings::selectionCacheTtlSecs),
            30.0),
        Arguments.of(
            new String[] {"--selection-cache-ttl-secs", "0.5"},
            f(NodeSettings::selectionCacheTtlSecs),
            0.5),
        Arguments.of(
            new String[] {"--selection-cache-max-entries", "100"},
            f(NodeSettings::selectionCacheMaxEntries),
            100),
        Arguments.of(
            new String[] {"--selection-cache-max-bytes", "1048576"},
            f(NodeSettings::selectionCacheMaxBytes),
            1_048_576L),
        Arguments.of(
            new String[] {"--no-router-assume-kv-reuse"},
            f(s -> s.router().load().assumeKvReuse()),
            false),
        Arguments.of(
            new String[] {"--router-assume-kv-reuse"},
            f(s -> s.router().load().assumeKvReuse()),
            true),
        Arguments.of(
            new String[] {"--router-tracking-hash", "public-xxh3-v1"},
            f(NodeSettings::routerTrackingHash),
            "public-xxh3-v1"),
        Arguments.of(
            new String[] {"--router-tracking-key-id", "3"},
            f(NodeSettings::routerTrackingKeyId),
            "3"),
        Arguments.of(
            new String[] {"--router-tracking-key-file", "/tmp/k"},
            f(NodeSettings::routerTrackingKeyFile),
            "/tmp/k"),
        Arguments.of(
            new String[] {"--policy", "kvc"}, f(n -> n.router().selectionPolicy().name()), "kvc"),
        Arguments.of(new String[] {"--help"}, f(NodeSettings::help), true),
        Arguments.of(new String[] {"-h", "--port", "-1"}, f(NodeSettings::port), 8092));
  }

  private static Function<NodeSettings, Object> f(Function<NodeSettings, Object> f) {
    return f;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("flags")
  void eachFlagParses(String[] args, Function<NodeSettings, Object> get, Object expected) {
    assertEquals(expected, get.apply(parse(args)));
  }

  static Stream<Arguments> badFlags() {
    return Stream.of(
        Arguments.of(
            new String[] {"--session-affinity-ttl-secs", "0"},
            "--session-affinity-ttl-secs must be between 1 and 31536000"),
        Arguments.of(
            new String[] {"--session-affinity-ttl-secs", "31536001"},
            "--session-affinity-ttl-secs must be between 1 and 31536000"),
        Arguments.of(new String[] {"--port", "65536"}, "--port must be between 0 and 65535"),
        Arguments.of(new String[] {"--port", "http"}, "Invalid value for option '--port'"),
        Arguments.of(new String[] {"--threads", "0"}, "--threads must be between 1 and"),
        Arguments.of(
            new String[] {"--replica-sync-port", "-1"},
            "--replica-sync-port must be between 0 and 65535, got -1"),
        Arguments.of(
            new String[] {"--replica-sync-peers", "tcp://b:9092"},
            "--replica-sync-peers requires --replica-sync-port"),
        Arguments.of(
            new String[] {"--replica-sync-port", "9092", "--replica-sync-peers", "b:9092"},
            "--replica-sync-peers entry 'b:9092' is not a tcp://host:port endpoint"),
        Arguments.of(
            new String[] {"--indexer-peers", "ftp://a"},
            "--indexer-peers entry 'ftp://a' is not an http(s) URL"),
        Arguments.of(
            new String[] {"--indexer-peers", "http://a:1,,http://b:2"},
            "--indexer-peers entry '' is not an http(s) URL"),
        Arguments.of(
            new String[] {"--selection-cache-ttl-secs", "0"},
            "--selection-cache-ttl-secs must be a finite number > 0"),
        Arguments.of(
            new String[] {"--selection-cache-max-entries", "0"},
            "--selection-cache-max-entries must be between 1 and"),
        Arguments.of(
            new String[] {"--selection-cache-max-bytes", "0"},
            "--selection-cache-max-bytes must be between 1 and"),
        Arguments.of(
            new String[] {"--router-tracking-hash", "sha1"},
            "--router-tracking-hash must be one of public-xxh3-v1, keyed-xxh3-v1"),
        Arguments.of(
            new String[] {"--router-assume-kv-reuse", "--no-router-assume-kv-reuse"},
            "option '--router-assume-kv-reuse'"),
        Arguments.of(new String[] {"--bogus"}, "Unknown option: '--bogus'"),
        Arguments.of(
            new String[] {"--prot", "8000"},
            "Unknown options: '--prot', '8000' (did you mean --port?)"),
        Arguments.of(
            new String[] {"--prot=8000"}, "Unknown option: '--prot=8000' (did you mean --port?)"),
        Arguments.of(
            new String[] {"--policy", "fastest"},
            "--policy must be one of kv, kvc, sticky, least_loaded, round_robin, got 'fastest'"),
        Arguments.of(
            new String[] {"--router-tracking-hash", "keyed-xxh3-v1"},
            "--router-tracking-hash keyed-xxh3-v1 requires --router-tracking-key-file"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badFlags")
  void badFlagsGiveOneLineMessages(String[] args, String message) {
    String got = failure(Map.of(), args);
    assertTrue(got.startsWith(message), got);
  }

  @Test
  void dynamoCliCacheOverrides() {
    NodeSettings s =
        parse(
            "--selection-cache-ttl-secs",
            "30",
            "--selection-cache-max-entries",
            "100",
            "--selection-cache-max-bytes",
            String.valueOf(1024 * 1024));
    assertEquals(30.0, s.selectionCacheTtlSecs());
    assertEquals(100, s.selectionCacheMaxEntries());
    assertEquals(1_048_576L, s.selectionCacheMaxBytes());
  }

  @Test
  void precedenceIsFileThenEnvThenFlag() throws IOException {
    Path conf =
        file(
            "c.json",
            """
        {"http": {"port": 9000, "host": "10.0.0.1"},
         "router": {"router_temperature": 0.5, "router_assume_kv_reuse": false,
                    "overlap_score_credit": 0.25},
         "selection_cache": {"max_entries": 10}}
        """);
    Map<String, String> env =
        Map.of("DYN_ROUTER_TEMPERATURE", "0.7", "DYN_ROUTER_ASSUME_KV_REUSE", "true");
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--config", conf.toString(), "--port", "9100", "--no-router-assume-kv-reuse"
            },
            env);
    assertEquals(9100, s.port(), "flag beats file");
    assertEquals("10.0.0.1", s.host(), "file beats default");
    assertEquals(10, s.selectionCacheMaxEntries());
    assertEquals(0.7, s.router().cost().temperature(), "env beats file");
    assertFalse(s.router().load().assumeKvReuse(), "flag beats env");
    assertEquals(0.25, s.router().cost().overlapScoreCredit());
    assertEquals(conf, s.configFile());
    assertTrue(
        NodeSettings.parse(new String[] {"--config", conf.toString()}, env)
            .router()
            .load()
            .assumeKvReuse(),
        "env beats file");
  }

  @Test
  void configFileSectionsCoverEveryNodeSetting() throws IOException {
    Path conf =
        file(
            "all.json",
            """
        {"index": {"threads": 2},
         "selection_cache": {"ttl_secs": 30, "max_entries": 100, "max_bytes": 1048576},
         "session_affinity": {"ttl_secs": 600},
         "tracking": {"hash": "public-xxh3-v1", "key_id": "e1"},
         "indexer_peers": ["http://peer:8092"],
         "replica_sync": {"port": 9092, "peers": ["tcp://peer:9092"]},
         "cluster": {"enabled": false}}
        """);
    NodeSettings s = parse("--config", conf.toString());
    assertEquals(2, s.threads());
    assertEquals(30.0, s.selectionCacheTtlSecs());
    assertEquals(1_048_576L, s.selectionCacheMaxBytes());
    assertEquals(600L, s.sessionAffinityTtlSecs());
    assertEquals("e1", s.routerTrackingKeyId());
    assertEquals(List.of("http://peer:8092"), s.indexerPeers());
    assertEquals(9092, s.replicaSyncPort());
    assertEquals(List.of("tcp://peer:9092"), s.replicaSyncPeers());
  }

  static Stream<Arguments> badFiles() {
    return Stream.of(
        Arguments.of(
            "{\"router\": {\"overlap_score_credit\": \"x\"}}",
            "config field router.overlap_score_credit must be a number"),
        Arguments.of(
            "{\"router\": {\"overlap_score_credit\": 1.5}}",
            "config field router.overlap_score_credit must be in [0, 1]"),
        Arguments.of(
            "{\"http\": {\"port\": 70000}}", "config field http.port must be between 0 and 65535"),
        Arguments.of("{\"http\": {\"prot\": 1}}", "config field http.prot is not a known setting"),
        Arguments.of("{\"http\": 8092}", "config field http must be an object"),
        Arguments.of(
            "{\"session_affinity\": {\"ttl_secs\": 0}}",
            "config field session_affinity.ttl_secs must be between 1 and 31536000"),
        Arguments.of(
            "{\"selection_cache\": {\"ttl_secs\": \"2m\"}}",
            "config field selection_cache.ttl_secs must be a number"),
        Arguments.of(
            "{\"replica_sync\": {\"port\": 65536}}",
            "config field replica_sync.port must be between 0 and 65535"),
        Arguments.of(
            "{\"replica_sync\": {\"peers\": [\"tcp://x:1\"]}}",
            "--replica-sync-peers requires --replica-sync-port"),
        Arguments.of(
            "{\"indexer_peers\": \"http://a\"}",
            "config field indexer_peers must be an array of strings"),
        Arguments.of(
            "{\"tracking\": {\"hash\": \"md5\"}}",
            "config field tracking.hash must be one of public-xxh3-v1, keyed-xxh3-v1"),
        Arguments.of(
            "{\"router\": {\"router_predicted_ttl_secs\": 5, \"use_kv_events\": false}}",
            "router.router_predicted_ttl_secs (DYN_ROUTER_PREDICTED_TTL_SECS) requires"),
        Arguments.of("[1, 2]", "must hold a JSON object"),
        Arguments.of(
            "{\"http\": {\"port\": 1, \"port\": 2}}", "line 1, column 28: duplicate field 'port'"),
        Arguments.of(
            "{not json", "line 1, column 2: unexpected character 'n': was expecting double-quote"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badFiles")
  void badConfigFileFieldsAreNamed(String json, String message) throws IOException {
    Path conf = file("bad.json", json);
    String got = failure(Map.of(), "--config", conf.toString());
    assertTrue(
        got.startsWith(message)
            || got.startsWith("--config " + conf + " " + message)
            || got.startsWith("--config " + conf + ": " + message),
        got);
  }

  @Test
  void configSyntaxErrorsPointAtTheLineAndColumn() throws IOException {
    Path conf = file("x.json", "{\n  \"http\": {\n    port: 1\n  }\n}\n");
    assertEquals(
        "--config "
            + conf
            + ": line 3, column 5: unexpected character 'p': was expecting double-quote"
            + " to start field name",
        failure(Map.of(), "--config", conf.toString()));
    Path cut = file("cut.json", "{\n  \"http\": {\"port\": 1}\n");
    String got = failure(Map.of(), "--config", cut.toString());
    assertTrue(
        got.startsWith("--config " + cut + ": line 3, column 1: unexpected end-of-input"), got);
    assertTrue(got.endsWith("(opened at line 1, column 1)"), got);
    for (Path p : List.of(conf, cut)) {
      String m = failure(Map.of(), "--config", p.toString());
      assertFalse(m.contains("Source") || m.contains("code ") || m.contains("REDACTED"), m);
    }
  }

  @Test
  void missingConfigFileIsNamed() {
    String got = failure(Map.of(), "--config", dir.resolve("nope.json").toString());
    assertTrue(got.startsWith("--config ") && got.contains("cannot be read"), got);
  }

  @Test
  void environmentErrorsNameTheVariable() {
    String got = failure(Map.of("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT", "1.5"));
    assertTrue(got.startsWith("DYN_ROUTER_KV_OVERLAP_SCORE_CREDIT must be in [0, 1]"), got);
    assertTrue(got.contains("overlap_score_weight was renamed"), got);
    assertEquals(
        2.0,
        NodeSettings.parse(new String[0], Map.of("DYN_OVERLAP_SCORE_WEIGHT", "2"))
            .router()
            .cost()
            .prefillLoadScale());
  }

  @Test
  void keyedTrackingNeedsA32ByteKeyAndAnId() throws IOException {
    Path key = Files.write(dir.resolve("key.bin"), new byte[32]);
    Path shortKey = Files.write(dir.resolve("short.bin"), new byte[31]);
    String keyed = "keyed-xxh3-v1";
    String missingId =
        failure(
            Map.of(),
            "--router-tracking-hash",
            keyed,
            "--router-tracking-key-file",
            key.toString());
    assertTrue(missingId.contains("requires --router-tracking-key-id"), missingId);
    String tooShort =
        failure(
            Map.of(),
            "--router-tracking-hash",
            keyed,
            "--router-tracking-key-file",
            shortKey.toString(),
            "--router-tracking-key-id",
            "1");
    assertTrue(tooShort.endsWith("must hold exactly 32 bytes, got 31"), tooShort);
    String absent =
        failure(
            Map.of(),
            "--router-tracking-hash",
            keyed,
            "--router-tracking-key-file",
            dir.resolve("none").toString(),
            "--router-tracking-key-id",
            "1");
    assertTrue(absent.endsWith("is not a readable file"), absent);

    NodeSettings ok =
        parse(
            "--router-tracking-hash",
            keyed,
            "--router-tracking-key-file",
            key.toString(),
            "--router-tracking-key-id",
            "1");
    assertEquals(keyed, ok.routerTrackingHash());
    assertEquals(key.toString(), ok.routerTrackingKeyFile());
    NodeSettings fromEnv =
        NodeSettings.parse(
            new String[] {"--router-tracking-key-id", "2"},
            Map.of(
                "DYN_ROUTER_TRACKING_HASH", keyed, "DYN_ROUTER_TRACKING_KEY_FILE", key.toString()));
    assertEquals(keyed, fromEnv.routerTrackingHash());
    assertEquals("2", fromEnv.routerTrackingKeyId());
  }

  @Test
  void helpUsageListsTheFlags() {
    String usage = NodeSettings.usage();
    for (String flag :
        List.of(
            "--port",
            "--threads",
            "--indexer-peers",
            "--replica-sync-port",
            "--replica-sync-peers",
            "--session-affinity-ttl-secs",
            "--selection-cache-ttl-secs",
            "--selection-cache-max-entries",
            "--selection-cache-max-bytes",
            "--[no-]router-assume-kv-reuse",
            "--router-tracking-hash",
            "--router-tracking-key-file",
            "--router-tracking-key-id",
            "--policy",
            "--config",
            "--help")) {
      assertTrue(usage.contains(flag), flag);
    }
  }

  @Test
  void confFileIsIdenticalToTheClasspathDefaults() throws IOException {
    byte[] resource;
    try (InputStream in =
        getClass().getClassLoader().getResourceAsStream(NodeSettings.DEFAULTS_RESOURCE)) {
      resource = in.readAllBytes();
    }
    assertArrayEquals(
        resource,
        Files.readAllBytes(Path.of("conf", "kvselect.json")),
        "conf/kvselect.json must be a copy of src/main/resources/kvselect-defaults.json");
    Map<?, ?> root =
        new ObjectMapper().readValue(new String(resource, StandardCharsets.UTF_8), Map.class);
    assertEquals(
        RouterConfigLoader.routerJson(RouterConfig.DEFAULTS),
        root.get("router"),
        "every router knob appears with its default");
    assertEquals(RouterConfigLoader.trackingJson(RouterConfig.DEFAULTS), root.get("tracking"));
  }
}
