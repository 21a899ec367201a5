package io.kvselect.server.config;

import static io.kvselect.server.config.SettingRules.host;
import static io.kvselect.server.config.SettingRules.httpUrls;
import static io.kvselect.server.config.SettingRules.integer;
import static io.kvselect.server.config.SettingRules.jsonError;
import static io.kvselect.server.config.SettingRules.number;
import static io.kvselect.server.config.SettingRules.policy;
import static io.kvselect.server.config.SettingRules.range;
import static io.kvselect.server.config.SettingRules.section;
import static io.kvselect.server.config.SettingRules.strings;
import static io.kvselect.server.config.SettingRules.tcpEndpoints;
import static io.kvselect.server.config.SettingRules.trackingFlags;
import static io.kvselect.server.config.SettingRules.trackingKey;
import static io.kvselect.server.config.SettingRules.ttl;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import io.kvselect.core.config.ConfigException;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.config.TrackingSettings;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Mutable accumulator behind {@link NodeSettings#parse}: each layer overwrites what it sets and
 * checks each value against the same rules, labelled with its source ({@code --flag} or {@code
 * config field section.key}); router knobs are delegated to {@link RouterConfigLoader} so that
 * the file, the environment and the flags share one table.
 *
 * <p>Per-value checks run as each layer is applied; rules spanning several values (replica-sync
 * peers need a port, keyed tracking needs a key, Dynamo's cross-knob rules) run once in {@link
 * #validate()}, so a port from the file satisfies peers given as flags. Confined to the parsing
 * thread; cost is linear in the size of the inputs plus one stat of the key file.
 *
 * <p>This class is the layering (which source is applied when, and what each one may set); how
 * one value is read and checked, the same for every layer, is {@link SettingRules}'. Owner: the
 * caller of {@link #fromDefaults} ({@link NodeSettings#parse}, or {@link EnvironmentCheck} for the
 * defaults), until {@link #build} freezes it.
 */
final class SettingsDraft {

  static final long MAX_AFFINITY_TTL_SECS = 31_536_000L;
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
  private static final Map<String, Set<String>> SECTIONS =
      Map.of(
          "http", Set.of("host", "port"),
          "index", Set.of("threads"),
          "selection_cache", Set.of("ttl_secs", "max_entries", "max_bytes"),
          "session_affinity", Set.of("ttl_secs"),
          "router_queue", Set.of("timeout_secs"),
          "replica_sync", Set.of("port", "peers"));

  private String host;
  private int port;
  private int threads;
  private List<String> indexerPeers = List.of();
  private Integer replicaSyncPort;
  private List<String> replicaSyncPeers = List.of();
  private Long sessionAffinityTtlSecs;
  private double cacheTtlSecs;
  private double queueTimeoutSecs;
  private int cacheMaxEntries;
  private long cacheMaxBytes;
  private Path configFile;
  private RouterConfig router = RouterConfig.DEFAULTS;
  private final OperationsDraft operations = new OperationsDraft();
  private final EppDraft epp = new EppDraft();
  private final io.kvselect.server.cluster.ClusterSettingsDraft cluster =
      new io.kvselect.server.cluster.ClusterSettingsDraft();

  /** A draft holding the classpath defaults. */
  static SettingsDraft fromDefaults() {
    SettingsDraft draft = new SettingsDraft();
    try (InputStream in =
        SettingsDraft.class.getClassLoader().getResourceAsStream(NodeSettings.DEFAULTS_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(NodeSettings.DEFAULTS_RESOURCE + " missing from classpath");
      }
      draft.applyJson(JSON.readValue(in, new TypeReference<Map<String, Object>>() {}));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + NodeSettings.DEFAULTS_RESOURCE, e);
    }
    return draft;
  }

  /**
   * Reads {@code --config FILE} (strict JSON, duplicate keys rejected) and applies it.
   *
   * @throws CliException naming the file when it is unreadable or not a JSON object, or the
   *     dotted field when a value is bad
   */
  void applyFile(Path file) {
    configFile = file;
    Map<String, Object> root;
    try {
      root = JSON.readValue(Files.readAllBytes(file), new TypeReference<Map<String, Object>>() {});
    } catch (MismatchedInputException e) {
      throw new CliException("--config " + file + " must hold a JSON object");
    } catch (JsonProcessingException e) {
      throw new CliException("--config " + file + ": " + jsonError(e));
    } catch (IOException e) {
      throw new CliException(
          "--config "
              + file
              + " cannot be read ("
              + e.getClass().getSimpleName()
              + (e.getMessage() == null ? "" : ": " + e.getMessage())
              + ")");
    }
    if (root == null) {
      throw new CliException("--config " + file + " is not a JSON object");
    }
    applyJson(root);
  }

  /**
   * Applies a document shaped like {@code conf/kvselect.json}. Unknown top-level sections belong
   * to other capabilities and are ignored; unknown keys inside the sections read here are errors.
   */
  void applyJson(Map<String, Object> root) {
    for (Map.Entry<String, Set<String>> section : SECTIONS.entrySet()) {
      Map<String, Object> s = section(root, section.getKey());
      for (String key : s.keySet()) {
        if (!section.getValue().contains(key)) {
          throw new CliException(
              "config field " + section.getKey() + "." + key + " is not a known setting");
        }
      }
    }
    Map<String, Object> http = section(root, "http");
    if (http.containsKey("host")) {
      host = host("config field http.host", http.get("host"));
    }
    if (http.containsKey("port")) {
      port =
          (int)
              range(
                  "config field http.port",
                  integer("config field http.port", http.get("port")),
                  0,
                  65535);
    }
    Map<String, Object> index = section(root, "index");
    if (index.containsKey("threads")) {
      threads =
          (int)
              range(
                  "config field index.threads",
                  integer("config field index.threads", index.get("threads")),
                  1,
                  Integer.MAX_VALUE);
    }
    Map<String, Object> queue = section(root, "router_queue");
    if (queue.containsKey("timeout_secs")) {
      queueTimeoutSecs =
          ttl(
              "config field router_queue.timeout_secs",
              number("config field router_queue.timeout_secs", queue.get("timeout_secs")));
    }
    Map<String, Object> cache = section(root, "selection_cache");
    if (cache.containsKey("ttl_secs")) {
      cacheTtlSecs =
          ttl(
              "config field selection_cache.ttl_secs",
              number("config field selection_cache.ttl_secs", cache.get("ttl_secs")));
    }
    if (cache.containsKey("max_entries")) {
      cacheMaxEntries =
          (int)
              range(
                  "config field selection_cache.max_entries",
                  integer("config field selection_cache.max_entries", cache.get("max_entries")),
                  1,
                  Integer.MAX_VALUE);
    }
    if (cache.containsKey("max_bytes")) {
      cacheMaxBytes =
          range(
              "config field selection_cache.max_bytes",
              integer("config field selection_cache.max_bytes", cache.get("max_bytes")),
              1,
              Long.MAX_VALUE);
    }
    Map<String, Object> affinity = section(root, "session_affinity");
    if (affinity.containsKey("ttl_secs")) {
      Object v = affinity.get("ttl_secs");
      String label = "config field session_affinity.ttl_secs";
      sessionAffinityTtlSecs =
          v == null ? null : range(label, integer(label, v), 1, MAX_AFFINITY_TTL_SECS);
    }
    try {
      router = RouterConfigLoader.fromJson(router, section(root, "router"), "router");
      router = RouterConfigLoader.trackingFromJson(router, section(root, "tracking"), "tracking");
    } catch (ConfigException e) {
      throw new CliException(e.getMessage());
    }
    if (root.containsKey("indexer_peers")) {
      indexerPeers =
          httpUrls(
              "config field indexer_peers",
              strings("config field indexer_peers", root.get("indexer_peers")));
    }
    Map<String, Object> sync = section(root, "replica_sync");
    if (sync.containsKey("port")) {
      Object v = sync.get("port");
      String label = "config field replica_sync.port";
      replicaSyncPort = v == null ? null : (int) range(label, integer(label, v), 0, 65535);
    }
    if (sync.containsKey("peers")) {
      replicaSyncPeers =
          tcpEndpoints(
              "config field replica_sync.peers",
              strings("config field replica_sync.peers", sync.get("peers")));
    }
    operations.applyJson(section(root, OperationsDraft.SECTION));
    epp.applyJson(section(root, EppDraft.SECTION));
    cluster.applyJson(root);
  }

  /** Applies the {@code DYN_ROUTER_*} variables; only router knobs come from the environment. */
  void applyEnv(Map<String, String> env) {
    try {
      router = RouterConfigLoader.fromEnv(router, env);
    } catch (ConfigException e) {
      throw new CliException(e.getMessage());
    }
    String timeout = env.get(QUEUE_TIMEOUT_ENV);
    if (timeout != null && !timeout.isBlank()) {
      try {
        queueTimeoutSecs = ttl(QUEUE_TIMEOUT_ENV, Double.parseDouble(timeout.trim()));
      } catch (NumberFormatException e) {
        throw new CliException(
            QUEUE_TIMEOUT_ENV + " must be a number of seconds, got '" + timeout + "'");
      }
    }
    operations.applyEnv(env);
    epp.applyEnv(env);
    cluster.applyEnv(env);
  }

  /** The longest a request waits in the router queue before a 429 (kvselect's addition). */
  static final String QUEUE_TIMEOUT_ENV = "DYN_ROUTER_QUEUE_TIMEOUT_SECS";

  /**
   * Applies the flags that were given (non-null). {@code --router-assume-kv-reuse} goes through
   * the per-request override path of {@link RouterConfig#with}, the tracking flags through {@link
   * RouterConfig#withTracking}.
   */
  void applyFlags(KvselectCommand c) {
    if (c.host != null) {
      host = host("--host", c.host);
    }
    if (c.port != null) {
      port = (int) range("--port", c.port, 0, 65535);
    }
    if (c.threads != null) {
      threads = (int) range("--threads", c.threads, 1, Integer.MAX_VALUE);
    }
    if (c.indexerPeers != null) {
      indexerPeers = httpUrls("--indexer-peers", c.indexerPeers);
    }
    if (c.replicaSyncPort != null) {
      replicaSyncPort = (int) range("--replica-sync-port", c.replicaSyncPort, 0, 65535);
    }
    if (c.replicaSyncPeers != null) {
      replicaSyncPeers = tcpEndpoints("--replica-sync-peers", c.replicaSyncPeers);
    }
    if (c.sessionAffinityTtlSecs != null) {
      sessionAffinityTtlSecs =
          range("--session-affinity-ttl-secs", c.sessionAffinityTtlSecs, 1, MAX_AFFINITY_TTL_SECS);
    }
    if (c.routerQueueTimeoutSecs != null) {
      queueTimeoutSecs = ttl("--router-queue-timeout-secs", c.routerQueueTimeoutSecs);
    }
    if (c.selectionCacheTtlSecs != null) {
      cacheTtlSecs = ttl("--selection-cache-ttl-secs", c.selectionCacheTtlSecs);
    }
    if (c.selectionCacheMaxEntries != null) {
      cacheMaxEntries =
          (int)
              range(
                  "--selection-cache-max-entries",
                  c.selectionCacheMaxEntries,
                  1,
                  Integer.MAX_VALUE);
    }
    if (c.selectionCacheMaxBytes != null) {
      cacheMaxBytes =
          range("--selection-cache-max-bytes", c.selectionCacheMaxBytes, 1, Long.MAX_VALUE);
    }
    if (c.policy != null) {
      router = router.withSelectionPolicy(router.selectionPolicy().withName(policy(c.policy)));
    }
    if (c.routerAssumeKvReuse != null) {
      router =
          router.with(
              new RouterConfigOverride(
                  null, null, null, c.routerAssumeKvReuse, null, null, null, null));
    }
    trackingFlags(c.routerTrackingHash, c.routerTrackingKeyId);
    router =
        router.withTracking(c.routerTrackingHash, c.routerTrackingKeyFile, c.routerTrackingKeyId);
    operations.applyFlags(c.operations);
    epp.applyFlags(c.epp);
    cluster.applyFlags(
        c.cluster, c.clusterName, c.clusterMembers, c.clusterPort, c.clusterHost, c.clusterBusPort);
    cluster.applyReconcileFlag(c.clusterReconcileSecs);
    cluster.applyTimeoutFlags(c.clusterCallBudgetMs, c.clusterFailureTimeoutSecs);
    cluster.applySecurityFlags(c.clusterTlsKeystore, c.clusterInsecure);
  }

  /** Cross-field checks on the merged layers. */
  void validate() {
    operations.validate();
    cluster.validate();
    if (!replicaSyncPeers.isEmpty() && replicaSyncPort == null) {
      throw new CliException("--replica-sync-peers requires --replica-sync-port");
    }
    try {
      RouterConfigLoader.validate(router);
    } catch (ConfigException e) {
      throw new CliException(e.getMessage());
    }
    TrackingSettings tracking = router.tracking();
    trackingKey(tracking.hash(), tracking.keyFile(), tracking.keyId());
  }

  /** Freezes the draft; {@code help} only records that {@code --help} was asked for. */
  NodeSettings build(boolean help, boolean version) {
    return new NodeSettings(
        host,
        port,
        threads,
        indexerPeers,
        replicaSyncPort,
        replicaSyncPeers,
        sessionAffinityTtlSecs,
        cacheTtlSecs,
        cacheMaxEntries,
        cacheMaxBytes,
        queueTimeoutSecs,
        configFile,
        router,
        help,
        version,
        operations.build(),
        cluster.build(),
        epp.build());
  }
}
