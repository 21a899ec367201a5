package io.kvselect.server.config;

import io.kvselect.core.config.RouterConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * The resolved startup settings of one node.
 *
 * <p>{@link #parse} layers, lowest first: the classpath resource {@code kvselect-defaults.json}
 * (identical to {@code conf/kvselect.json}), the optional {@code --config FILE} (same shape, any
 * subset), the {@code DYN_ROUTER_*} environment, then command-line flags. Every value is validated
 * once the layers are merged; failures are {@link CliException}s naming the flag, variable or
 * dotted field. The {@code --replica-sync-*} settings are only validated here.
 *
 * <p>Invariants after {@code parse}: {@code port} in 0..65535 (0 = ephemeral), {@code threads >=
 * 1}, {@code replicaSyncPort} null or 0..65535 (0: a free port) and non-null whenever {@code replicaSyncPeers} is
 * non-empty, {@code sessionAffinityTtlSecs} null (disabled) or 1..31,536,000, cache TTL > 0 and
 * limits >= 1, peers well-formed; keyed tracking has a readable 32-byte key file and a key id.
 * Lists are immutable. When {@code help} or {@code version} is true the other fields are the built-in defaults.
 *
 * @param host HTTP bind address
 * @param port HTTP port
 * @param threads KV indexer threads
 * @param indexerPeers http(s) base URLs for startup {@code /dump} recovery
 * @param replicaSyncPort local replica-sync PUB port, or null
 * @param replicaSyncPeers replica-sync peer endpoints ({@code tcp://host:port})
 * @param sessionAffinityTtlSecs session affinity TTL, or null when disabled
 * @param selectionCacheTtlSecs pending-selection TTL in seconds
 * @param selectionCacheMaxEntries pending-selection entry cap
 * @param selectionCacheMaxBytes pending-selection byte budget
 * @param routerQueueTimeoutSecs longest wait in the router queue before a 429
 * @param configFile the {@code --config} file, or null
 * @param router the scheduling knobs, including the tracking-hash settings
 * @param help whether {@code --help} was given
 * @param version whether {@code --version} was given
 * @param operations access control, TLS, workers file, drain and liveness ({@link OperationsSettings})
 * @param cluster whether and how the node clusters ({@code --cluster*}, {@code KVSELECT_CLUSTER_*},
 *     section {@code cluster})
 * @param epp the endpoint picker ({@code --epp-*}, {@code KVSELECT_EPP_*}, section {@code epp}; off by default)
 */
public record NodeSettings(
    String host,
    int port,
    int threads,
    List<String> indexerPeers,
    Integer replicaSyncPort,
    List<String> replicaSyncPeers,
    Long sessionAffinityTtlSecs,
    double selectionCacheTtlSecs,
    int selectionCacheMaxEntries,
    long selectionCacheMaxBytes,
    double routerQueueTimeoutSecs,
    Path configFile,
    RouterConfig router,
    boolean help,
    boolean version,
    OperationsSettings operations,
    io.kvselect.server.cluster.ClusterSettings cluster,
    EppSettings epp) {

  /** Classpath resource holding every default; {@code conf/kvselect.json} is a copy. */
  public static final String DEFAULTS_RESOURCE = "kvselect-defaults.json";

  public NodeSettings {
    indexerPeers = List.copyOf(indexerPeers);
    replicaSyncPeers = List.copyOf(replicaSyncPeers);
  }

  /**
   * Resolves settings from {@code args} and {@code env} (usually {@code System.getenv()}).
   *
   * @throws CliException with a one-line message naming the offending flag, variable or field
   */
  public static NodeSettings parse(String[] args, Map<String, String> env) {
    KvselectCommand cmd = new KvselectCommand();
    try {
      new CommandLine(cmd).parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      throw new CliException(FlagSuggestion.oneLine(e));
    }
    SettingsDraft draft = SettingsDraft.fromDefaults();
    if (cmd.help || cmd.version) {
      return draft.build(cmd.help, cmd.version);
    }
    if (cmd.configFile != null) {
      draft.applyFile(cmd.configFile);
    }
    draft.applyEnv(env);
    draft.applyFlags(cmd);
    draft.validate();
    return draft.build(false, false);
  }

  /** The picocli usage text for {@code --help}, ending with the environment variables and their defaults. */
  public static String usage() {
    CommandLine cl = new CommandLine(new KvselectCommand());
    cl.getCommandSpec().usageMessage().footer(EnvironmentCheck.helpFooter().toArray(String[]::new));
    return cl.getUsageMessage(CommandLine.Help.Ansi.OFF);
  }

  /**
   * The effective configuration in the shape of {@code conf/kvselect.json}: fed back through
   * {@code --config} it yields these settings. Served by {@code GET /config}.
   */
  public Map<String, Object> configJson() {
    Map<String, Object> root = new java.util.LinkedHashMap<>();
    root.put("http", ordered("host", host, "port", port));
    root.put("index", ordered("threads", threads));
    root.put(
        "selection_cache",
        ordered(
            "ttl_secs",
            selectionCacheTtlSecs,
            "max_entries",
            selectionCacheMaxEntries,
            "max_bytes",
            selectionCacheMaxBytes));
    root.put("session_affinity", ordered("ttl_secs", sessionAffinityTtlSecs));
    root.put("router_queue", ordered("timeout_secs", routerQueueTimeoutSecs));
    root.put("router", io.kvselect.core.config.RouterConfigLoader.routerJson(router));
    root.put("tracking", io.kvselect.core.config.RouterConfigLoader.trackingJson(router));
    root.put("indexer_peers", indexerPeers);
    root.put("replica_sync", ordered("port", replicaSyncPort, "peers", replicaSyncPeers));
    root.put("operations", operations.configJson());
    root.put("cluster", cluster.json());
    root.put("epp", epp.configJson());
    return root;
  }

  private static Map<String, Object> ordered(Object... kv) {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  /** {@code router_tracking_hash}: {@code public-xxh3-v1} or {@code keyed-xxh3-v1}. */
  public String routerTrackingHash() {
    return router.tracking().hash();
  }

  /** The keyed-mode key file, or null. */
  public String routerTrackingKeyFile() {
    return router.tracking().keyFile();
  }

  /** The keyed-mode key epoch, or null. */
  public String routerTrackingKeyId() {
    return router.tracking().keyId();
  }
}
