package io.kvselect.server.config;

import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The {@code kvselect} command line: Dynamo's {@code select_service} flags plus {@code --host} and
 * {@code --config}. Every option is boxed and null when absent, so that {@link NodeSettings#parse}
 * can layer flags over the config file and the environment; ranges are checked there, not here.
 *
 * <p>A mutable picocli target; build one per parse and confine it to the parsing thread.
 */
@Command(
    name = "kvselect",
    sortOptions = false,
    usageHelpAutoWidth = true,
    description = {
      "KV-cache-aware worker selection service.",
      "Precedence: built-in defaults < --config FILE < DYN_ROUTER_* environment < flags."
    })
public final class KvselectCommand {

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "JSON config file, same shape as conf/kvselect.json (any subset).")
  Path configFile;

  @Option(names = "--host", paramLabel = "ADDR", description = "HTTP bind address (0.0.0.0).")
  String host;

  @Option(
      names = "--port",
      paramLabel = "PORT",
      description = "HTTP port, 0..65535; 0 picks an ephemeral port (8092).")
  Integer port;

  @Option(names = "--threads", paramLabel = "N", description = "KV indexer threads, >= 1 (4).")
  Integer threads;

  @Option(
      names = "--indexer-peers",
      paramLabel = "URL",
      split = ",",
      description = "Comma-separated http(s) base URLs for startup recovery via GET /dump.")
  List<String> indexerPeers;

  @Option(
      names = "--replica-sync-port",
      paramLabel = "PORT",
      description = "Local replica-sync PUB port, 0..65535 (0: a free port, logged at start-up).")
  Integer replicaSyncPort;

  @Option(
      names = "--replica-sync-peers",
      paramLabel = "ENDPOINT",
      split = ",",
      description = "Comma-separated tcp://host:port peers; requires --replica-sync-port.")
  List<String> replicaSyncPeers;

  @Option(
      names = "--session-affinity-ttl-secs",
      paramLabel = "SECS",
      description = "Session affinity TTL, 1..31536000 s; unset disables affinity.")
  Long sessionAffinityTtlSecs;

  @Option(
      names = "--router-queue-timeout-secs",
      paramLabel = "SECS",
      description =
          "Longest wait in the router queue before a 429, > 0 (30; DYN_ROUTER_QUEUE_TIMEOUT_SECS).")
  Double routerQueueTimeoutSecs;

  @Option(
      names = "--selection-cache-ttl-secs",
      paramLabel = "SECS",
      description = "Pending-selection TTL in seconds, > 0 (120).")
  Double selectionCacheTtlSecs;

  @Option(
      names = "--selection-cache-max-entries",
      paramLabel = "N",
      description = "Maximum pending selections, >= 1 (4096).")
  Integer selectionCacheMaxEntries;

  @Option(
      names = "--selection-cache-max-bytes",
      paramLabel = "BYTES",
      description = "Approximate pending-selection byte budget, >= 1 (268435456).")
  Long selectionCacheMaxBytes;

  @Option(
      names = "--policy",
      paramLabel = "NAME",
      description =
          "Selection policy: kv (default), kvc, sticky, least_loaded, round_robin"
              + " (router.policy; KVSELECT_ROUTER_POLICY).")
  String policy;

  @Option(
      names = "--router-assume-kv-reuse",
      negatable = true,
      description = "Assume KV reuse when projecting decode blocks (env/default: true).")
  Boolean routerAssumeKvReuse;

  @Option(
      names = "--router-tracking-hash",
      paramLabel = "ALGO",
      description = "public-xxh3-v1 (default) or experimental keyed-xxh3-v1.")
  String routerTrackingHash;

  @Option(
      names = "--router-tracking-key-file",
      paramLabel = "FILE",
      description = "32-byte key file for keyed-xxh3-v1.")
  String routerTrackingKeyFile;

  @Option(
      names = "--router-tracking-key-id",
      paramLabel = "ID",
      description = "Key epoch for keyed-xxh3-v1.")
  String routerTrackingKeyId;

  @Mixin OperationsOptions operations = new OperationsOptions();

  @Mixin EppOptions epp = new EppOptions();

  @Option(
      names = "--cluster",
      description = "Start clustered (Hazelcast, configured by cluster.xml); off by default.")
  Boolean cluster;

  @Option(
      names = "--cluster-name",
      paramLabel = "NAME",
      description =
          "Cluster name; nodes with another name never join (kvselect; KVSELECT_CLUSTER_NAME).")
  String clusterName;

  @Option(
      names = "--cluster-members",
      paramLabel = "HOST[:PORT]",
      split = ",",
      description =
          "Comma-separated members to join at start (127.0.0.1; KVSELECT_CLUSTER_MEMBERS).")
  List<String> clusterMembers;

  @Option(
      names = "--cluster-port",
      paramLabel = "PORT",
      description =
          "Member port, 1..65535; the next free one when taken (5701; KVSELECT_CLUSTER_PORT).")
  Integer clusterPort;

  @Option(
      names = "--cluster-host",
      paramLabel = "IPV4",
      description = "Address to bind and advertise to members (127.0.0.1; KVSELECT_CLUSTER_HOST).")
  String clusterHost;

  @Option(
      names = "--cluster-bus-port",
      paramLabel = "PORT",
      description =
          "Clustered event-bus port on --cluster-host; 0 = ephemeral (0; KVSELECT_CLUSTER_BUS_PORT).")
  Integer clusterBusPort;

  @Option(
      names = "--cluster-reconcile-secs",
      paramLabel = "SECS",
      description =
          "Seconds between load digests; views converge within two (5; KVSELECT_CLUSTER_RECONCILE_SECS).")
  Integer clusterReconcileSecs;

  @Option(
      names = "--cluster-call-budget-ms",
      paramLabel = "MS",
      description =
          "Longest wait of a request for shared cluster state before it decides locally (250;"
              + " KVSELECT_CLUSTER_CALL_BUDGET_MS).")
  Integer clusterCallBudgetMs;

  @Option(
      names = "--cluster-failure-timeout-secs",
      paramLabel = "SECS",
      description =
          "Seconds a silent member is kept before the others remove it (5;"
              + " KVSELECT_CLUSTER_FAILURE_TIMEOUT_SECS).")
  Integer clusterFailureTimeoutSecs;

  @Option(
      names = "--cluster-tls-keystore",
      paramLabel = "FILE",
      description =
          "PKCS#12 key and certificate of the cluster: mutual TLS on the clustered event bus; password in"
              + " KVSELECT_CLUSTER_TLS_PASSWORD (none; KVSELECT_CLUSTER_TLS_KEYSTORE).")
  String clusterTlsKeystore;

  @Option(
      names = "--cluster-insecure",
      description =
          "Allow a plain-TCP event bus on a non-loopback --cluster-host (refused otherwise).")
  Boolean clusterInsecure;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  @Option(
      names = {"-V", "--version"},
      versionHelp = true,
      description = "Print the version and exit.")
  boolean version;
}
