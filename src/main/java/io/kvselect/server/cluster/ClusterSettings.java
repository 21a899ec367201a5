package io.kvselect.server.cluster;

import io.kvselect.server.config.CliException;
import java.util.List;
import java.util.Map;

/**
 * How a node clusters (section {@code cluster} of {@code conf/kvselect.json}, the {@code
 * --cluster*} flags and the {@code KVSELECT_CLUSTER_*} variables). With {@code enabled} false the
 * other fields are inert and nothing of Hazelcast starts.
 *
 * <p>Invariants: {@code name} is 1..{@value #MAX_NAME} printable characters without spaces;
 * {@code members} holds {@code host} or {@code host:port} entries (port 1..65535), immutable;
 * {@code port} is 1..65535; {@code host} is an IPv4 address literal (it is both the interface
 * Hazelcast binds and the address it advertises); {@code busPort} is 0 (ephemeral) or 1..65535.
 *
 * @param enabled whether the node starts clustered
 * @param name the Hazelcast cluster name; nodes with other names never join this cluster
 * @param members the addresses tried at start-up to find the cluster
 * @param port the first member port tried (the next free one is taken when it is in use)
 * @param host the address to bind and advertise
 * @param busPort the clustered event bus's TCP port on {@code host}; 0 picks an ephemeral one
 * @param reconcileIntervalSecs how often each node publishes the digest of the reservations it
 *     owns (1..{@value #MAX_RECONCILE_SECS} s; {@value #DEFAULT_RECONCILE_SECS} by default); load
 *     views converge within two intervals
 * @param callBudgetMillis how long a request waits for the shared state (session table, pending
 *     store) before it decides locally (1..{@value #MAX_CALL_BUDGET_MS} ms;
 *     {@value #DEFAULT_CALL_BUDGET_MS} by default)
 * @param failureTimeoutSecs how long a member may be silent (paused, cut off) before the others
 *     remove it and serve its partitions from backups (2..{@value #MAX_FAILURE_TIMEOUT_SECS} s;
 *     {@value #DEFAULT_FAILURE_TIMEOUT_SECS} by default)
 * @param busSecurity mutual TLS of the clustered event bus, or plain TCP (see {@link BusSecurity})
 */
public record ClusterSettings(
    boolean enabled,
    String name,
    List<String> members,
    int port,
    String host,
    int busPort,
    int reconcileIntervalSecs,
    int callBudgetMillis,
    int failureTimeoutSecs,
    BusSecurity busSecurity) {

  /**
   * How the clustered event bus is protected: {@code keystore} (a PKCS#12 file holding this
   * cluster's key and certificate, the same file on every node) turns on mutual TLS, so a process
   * without the certificate can neither send to nor receive from the nodes; null leaves the bus
   * plain TCP, which a node refuses on a non-loopback {@code host} unless {@code insecure}.
   * {@code password} comes only from {@value #TLS_PASSWORD_ENV} (never a flag, so it stays off the
   * process list).
   */
  public record BusSecurity(String keystore, String password, boolean insecure) {
    public static final BusSecurity PLAIN = new BusSecurity(null, null, false);

    @Override
    public String toString() {
      return "BusSecurity[keystore=" + keystore + ", insecure=" + insecure + "]";
    }
  }

  public static final int MAX_NAME = 128;
  public static final String NAME_ENV = "KVSELECT_CLUSTER_NAME";
  public static final String MEMBERS_ENV = "KVSELECT_CLUSTER_MEMBERS";
  public static final String PORT_ENV = "KVSELECT_CLUSTER_PORT";
  public static final String HOST_ENV = "KVSELECT_CLUSTER_HOST";
  public static final String BUS_PORT_ENV = "KVSELECT_CLUSTER_BUS_PORT";
  public static final String RECONCILE_ENV = "KVSELECT_CLUSTER_RECONCILE_SECS";
  public static final int DEFAULT_RECONCILE_SECS = 5;
  public static final int MAX_RECONCILE_SECS = 3600;
  public static final String CALL_BUDGET_ENV = "KVSELECT_CLUSTER_CALL_BUDGET_MS";
  public static final int DEFAULT_CALL_BUDGET_MS = 250;
  public static final int MAX_CALL_BUDGET_MS = 60_000;
  public static final String FAILURE_TIMEOUT_ENV = "KVSELECT_CLUSTER_FAILURE_TIMEOUT_SECS";
  public static final int DEFAULT_FAILURE_TIMEOUT_SECS = 5;
  public static final int MAX_FAILURE_TIMEOUT_SECS = 300;
  public static final String TLS_KEYSTORE_ENV = "KVSELECT_CLUSTER_TLS_KEYSTORE";
  public static final String TLS_PASSWORD_ENV = "KVSELECT_CLUSTER_TLS_PASSWORD";

  /** The variables read, in {@code --help} order. */
  public static final List<String> ENVIRONMENT =
      List.of(
          NAME_ENV,
          MEMBERS_ENV,
          PORT_ENV,
          HOST_ENV,
          BUS_PORT_ENV,
          RECONCILE_ENV,
          CALL_BUDGET_ENV,
          FAILURE_TIMEOUT_ENV,
          TLS_KEYSTORE_ENV,
          TLS_PASSWORD_ENV);

  public ClusterSettings {
    members = List.copyOf(members);
  }

  /** Settings with the default call budget and failure timeout. */
  public ClusterSettings(
      boolean enabled,
      String name,
      List<String> members,
      int port,
      String host,
      int busPort,
      int reconcileIntervalSecs) {
    this(
        enabled,
        name,
        members,
        port,
        host,
        busPort,
        reconcileIntervalSecs,
        DEFAULT_CALL_BUDGET_MS,
        DEFAULT_FAILURE_TIMEOUT_SECS,
        BusSecurity.PLAIN);
  }

  /** Settings with an ephemeral event-bus port and the default reconciliation interval. */
  public ClusterSettings(
      boolean enabled, String name, List<String> members, int port, String host) {
    this(enabled, name, members, port, host, 0, DEFAULT_RECONCILE_SECS);
  }

  /** Settings with the default reconciliation interval. */
  public ClusterSettings(
      boolean enabled, String name, List<String> members, int port, String host, int busPort) {
    this(enabled, name, members, port, host, busPort, DEFAULT_RECONCILE_SECS);
  }

  /**
   * Refuses a plain-TCP event bus on a non-loopback {@code host} unless {@code insecure}: checked
   * when the node starts clustered.
   *
   * @throws CliException naming the risk and both ways out
   */
  public void requireBusProtection() {
    if (busSecurity.keystore() == null && !busSecurity.insecure() && !host.startsWith("127.")) {
      throw new CliException(
          "--cluster-host "
              + host
              + " is not a loopback address and the clustered event bus"
              + " has no TLS: any process that reaches it could read and forge kvselect's sync messages; give"
              + " --cluster-tls-keystore FILE (mutual TLS) or accept the risk with --cluster-insecure");
    }
  }

  /** The settings as the {@code cluster} section of the config file. */
  public Map<String, Object> json() {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("enabled", enabled);
    m.put("name", name);
    m.put("members", members);
    m.put("port", port);
    m.put("host", host);
    m.put("bus_port", busPort);
    m.put("reconcile_interval_secs", reconcileIntervalSecs);
    m.put("call_budget_ms", callBudgetMillis);
    m.put("failure_timeout_secs", failureTimeoutSecs);
    m.put("tls_keystore", busSecurity.keystore());
    m.put("insecure", busSecurity.insecure());
    return m;
  }
}
