package io.kvselect.server.cluster;

import io.kvselect.server.config.CliException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

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
public record ClusterSettings(boolean enabled, String name, List<String> members, int port, String host,
    int busPort, int reconcileIntervalSecs, int callBudgetMillis, int failureTimeoutSecs, BusSecurity busSecurity) {

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
  public static final List<String> ENVIRONMENT = List.of(NAME_ENV, MEMBERS_ENV, PORT_ENV, HOST_ENV, BUS_PORT_ENV,
      RECONCILE_ENV, CALL_BUDGET_ENV, FAILURE_TIMEOUT_ENV, TLS_KEYSTORE_ENV, TLS_PASSWORD_ENV);

  private static final Set<String> FIELDS = Set.of("enabled", "name", "members", "port", "host", "bus_port",
      "reconcile_interval_secs", "call_budget_ms", "failure_timeout_secs", "tls_keystore", "insecure");
  private static final Pattern IPV4 =
      Pattern.compile("(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");
  private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?");

  public ClusterSettings {
    members = List.copyOf(members);
  }

  /** Settings with the default call budget and failure timeout. */
  public ClusterSettings(boolean enabled, String name, List<String> members, int port, String host, int busPort,
      int reconcileIntervalSecs) {
    this(enabled, name, members, port, host, busPort, reconcileIntervalSecs, DEFAULT_CALL_BUDGET_MS,
        DEFAULT_FAILURE_TIMEOUT_SECS, BusSecurity.PLAIN);
  }

  /** Settings with an ephemeral event-bus port and the default reconciliation interval. */
  public ClusterSettings(boolean enabled, String name, List<String> members, int port, String host) {
    this(enabled, name, members, port, host, 0, DEFAULT_RECONCILE_SECS);
  }

  /** Settings with the default reconciliation interval. */
  public ClusterSettings(boolean enabled, String name, List<String> members, int port, String host, int busPort) {
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
      throw new CliException("--cluster-host " + host + " is not a loopback address and the clustered event bus"
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

  /**
   * The mutable accumulator behind the layers of {@code NodeSettings.parse}: the file section,
   * the environment, then the flags, each value checked as it is applied and labelled with its
   * source. Confined to the parsing thread.
   */
  public static final class Draft {
    private boolean enabled;
    private String name;
    private List<String> members = List.of();
    private int port;
    private String host;
    private int busPort;
    private int reconcileIntervalSecs = DEFAULT_RECONCILE_SECS;
    private int callBudgetMillis = DEFAULT_CALL_BUDGET_MS;
    private int failureTimeoutSecs = DEFAULT_FAILURE_TIMEOUT_SECS;
    private String tlsKeystore;
    private String tlsPassword;
    private boolean insecure;
    /** The first environment variable or flag that set a cluster value, for the "needs --cluster" check. */
    private String setOutsideFile;

    /** Applies the {@code cluster} section of a config document, if present. */
    public void applyJson(Map<String, Object> root) {
      Object section = root.get("cluster");
      if (section == null) {
        return;
      }
      if (!(section instanceof Map<?, ?> s)) {
        throw new CliException("config field cluster must be an object");
      }
      for (Object key : s.keySet()) {
        if (!FIELDS.contains(key)) {
          throw new CliException("config field cluster." + key + " is not a known setting");
        }
      }
      if (s.containsKey("enabled")) {
        if (!(s.get("enabled") instanceof Boolean b)) {
          throw new CliException("config field cluster.enabled must be true or false");
        }
        enabled = b;
      }
      if (s.containsKey("name")) {
        name = name("config field cluster.name", s.get("name"));
      }
      if (s.containsKey("members")) {
        members = members("config field cluster.members", strings("config field cluster.members", s.get("members")));
      }
      if (s.containsKey("port")) {
        port = port("config field cluster.port", s.get("port"));
      }
      if (s.containsKey("host")) {
        host = host("config field cluster.host", s.get("host"));
      }
      if (s.containsKey("bus_port")) {
        busPort = busPort("config field cluster.bus_port", s.get("bus_port"));
      }
      if (s.containsKey("reconcile_interval_secs")) {
        reconcileIntervalSecs = reconcileSecs("config field cluster.reconcile_interval_secs",
            s.get("reconcile_interval_secs"));
      }
      if (s.containsKey("call_budget_ms")) {
        callBudgetMillis = bounded("config field cluster.call_budget_ms", s.get("call_budget_ms"), 1,
            MAX_CALL_BUDGET_MS, "milliseconds");
      }
      if (s.containsKey("tls_keystore")) {
        Object k = s.get("tls_keystore");
        if (k != null && !(k instanceof String)) {
          throw new CliException("config field cluster.tls_keystore must be a file path or null");
        }
        tlsKeystore = k == null || ((String) k).isBlank() ? null : (String) k;
      }
      if (s.containsKey("insecure")) {
        if (!(s.get("insecure") instanceof Boolean b)) {
          throw new CliException("config field cluster.insecure must be true or false");
        }
        insecure = b;
      }
      if (s.containsKey("failure_timeout_secs")) {
        failureTimeoutSecs = bounded("config field cluster.failure_timeout_secs", s.get("failure_timeout_secs"), 2,
            MAX_FAILURE_TIMEOUT_SECS, "seconds");
      }
    }

    /** Applies the {@code KVSELECT_CLUSTER_*} variables that are set and not blank. */
    public void applyEnv(Map<String, String> env) {
      String v = env.get(NAME_ENV);
      if (v != null && !v.isBlank()) {
        name = name(NAME_ENV, v.strip());
        outside(NAME_ENV);
      }
      v = env.get(MEMBERS_ENV);
      if (v != null && !v.isBlank()) {
        members = members(MEMBERS_ENV, List.of(v.split(",", -1)));
        outside(MEMBERS_ENV);
      }
      v = env.get(PORT_ENV);
      if (v != null && !v.isBlank()) {
        try {
          port = port(PORT_ENV, Long.parseLong(v.strip()));
        } catch (NumberFormatException e) {
          throw new CliException(PORT_ENV + " must be an integer port, got '" + v + "'");
        }
        outside(PORT_ENV);
      }
      v = env.get(HOST_ENV);
      if (v != null && !v.isBlank()) {
        host = host(HOST_ENV, v.strip());
        outside(HOST_ENV);
      }
      v = env.get(BUS_PORT_ENV);
      if (v != null && !v.isBlank()) {
        try {
          busPort = busPort(BUS_PORT_ENV, Long.parseLong(v.strip()));
        } catch (NumberFormatException e) {
          throw new CliException(BUS_PORT_ENV + " must be an integer port, got '" + v + "'");
        }
        outside(BUS_PORT_ENV);
      }
      v = env.get(RECONCILE_ENV);
      if (v != null && !v.isBlank()) {
        try {
          reconcileIntervalSecs = reconcileSecs(RECONCILE_ENV, Long.parseLong(v.strip()));
        } catch (NumberFormatException e) {
          throw new CliException(RECONCILE_ENV + " must be an integer number of seconds, got '" + v + "'");
        }
        outside(RECONCILE_ENV);
      }
      v = env.get(CALL_BUDGET_ENV);
      if (v != null && !v.isBlank()) {
        callBudgetMillis = bounded(CALL_BUDGET_ENV, integer(CALL_BUDGET_ENV, v, "milliseconds"), 1, MAX_CALL_BUDGET_MS,
            "milliseconds");
        outside(CALL_BUDGET_ENV);
      }
      v = env.get(TLS_KEYSTORE_ENV);
      if (v != null && !v.isBlank()) {
        tlsKeystore = v.strip();
        outside(TLS_KEYSTORE_ENV);
      }
      v = env.get(TLS_PASSWORD_ENV);
      if (v != null && !v.isEmpty()) {
        tlsPassword = v;
      }
      v = env.get(FAILURE_TIMEOUT_ENV);
      if (v != null && !v.isBlank()) {
        failureTimeoutSecs = bounded(FAILURE_TIMEOUT_ENV, integer(FAILURE_TIMEOUT_ENV, v, "seconds"), 2,
            MAX_FAILURE_TIMEOUT_SECS, "seconds");
        outside(FAILURE_TIMEOUT_ENV);
      }
    }

    /** Applies {@code --cluster-tls-keystore} and {@code --cluster-insecure} when given (null when absent). */
    public void applySecurityFlags(String keystore, Boolean insecureFlag) {
      if (keystore != null) {
        tlsKeystore = keystore.isBlank() ? null : keystore;
        outside("--cluster-tls-keystore");
      }
      if (insecureFlag != null && insecureFlag) {
        insecure = true;
        outside("--cluster-insecure");
      }
    }

    /** Applies {@code --cluster-call-budget-ms} and {@code --cluster-failure-timeout-secs} when given. */
    public void applyTimeoutFlags(Integer budgetMillis, Integer failureSecs) {
      if (budgetMillis != null) {
        callBudgetMillis = bounded("--cluster-call-budget-ms", (long) budgetMillis, 1, MAX_CALL_BUDGET_MS,
            "milliseconds");
        outside("--cluster-call-budget-ms");
      }
      if (failureSecs != null) {
        failureTimeoutSecs = bounded("--cluster-failure-timeout-secs", (long) failureSecs, 2, MAX_FAILURE_TIMEOUT_SECS,
            "seconds");
        outside("--cluster-failure-timeout-secs");
      }
    }

    /** Applies {@code --cluster-reconcile-secs} when given (null when absent). */
    public void applyReconcileFlag(Integer secs) {
      if (secs != null) {
        reconcileIntervalSecs = reconcileSecs("--cluster-reconcile-secs", (long) secs);
        outside("--cluster-reconcile-secs");
      }
    }

    /** Applies the flags that were given (null when absent). */
    public void applyFlags(Boolean cluster, String name, List<String> members, Integer port, String host,
        Integer busPort) {
      if (cluster != null) {
        enabled = cluster;
      }
      if (name != null) {
        this.name = name("--cluster-name", name);
        outside("--cluster-name");
      }
      if (members != null) {
        this.members = members("--cluster-members", members);
        outside("--cluster-members");
      }
      if (port != null) {
        this.port = port("--cluster-port", (long) port);
        outside("--cluster-port");
      }
      if (host != null) {
        this.host = host("--cluster-host", host);
        outside("--cluster-host");
      }
      if (busPort != null) {
        this.busPort = busPort("--cluster-bus-port", (long) busPort);
        outside("--cluster-bus-port");
      }
    }

    /** A cluster flag or variable without clustering is almost surely a mistake. */
    public void validate() {
      if (!enabled && setOutsideFile != null) {
        throw new CliException(setOutsideFile + " requires --cluster (or cluster.enabled: true in the config file)");
      }
      if (!enabled) {
        return;
      }
      if (tlsKeystore != null) {
        if (!java.nio.file.Files.isReadable(java.nio.file.Path.of(tlsKeystore))) {
          throw new CliException("--cluster-tls-keystore " + tlsKeystore + ": no such readable file");
        }
        if (tlsPassword == null) {
          throw new CliException("--cluster-tls-keystore needs its password in " + TLS_PASSWORD_ENV);
        }
      }
    }

    public ClusterSettings build() {
      return new ClusterSettings(enabled, name, members, port, host, busPort, reconcileIntervalSecs, callBudgetMillis,
          failureTimeoutSecs, new BusSecurity(tlsKeystore, tlsPassword, insecure));
    }

    private void outside(String label) {
      if (setOutsideFile == null) {
        setOutsideFile = label;
      }
    }
  }

  static String name(String label, Object v) {
    if (!(v instanceof String s) || s.isEmpty() || s.length() > MAX_NAME
        || !s.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new CliException(label + " must be 1.." + MAX_NAME
          + " printable ASCII characters without spaces, got " + quoted(v));
    }
    return s;
  }

  static int port(String label, Object v) {
    if (!(v instanceof Integer || v instanceof Long || v instanceof Short)) {
      throw new CliException(label + " must be an integer port, got " + quoted(v));
    }
    long p = ((Number) v).longValue();
    if (p < 1 || p > 65535) {
      throw new CliException(label + " must be between 1 and 65535, got " + p);
    }
    return (int) p;
  }

  static int busPort(String label, Object v) {
    if (!(v instanceof Integer || v instanceof Long || v instanceof Short)) {
      throw new CliException(label + " must be an integer port, got " + quoted(v));
    }
    long p = ((Number) v).longValue();
    if (p < 0 || p > 65535) {
      throw new CliException(label + " must be between 0 and 65535 (0 = ephemeral), got " + p);
    }
    return (int) p;
  }

  static int reconcileSecs(String label, Object v) {
    if (!(v instanceof Integer || v instanceof Long || v instanceof Short)) {
      throw new CliException(label + " must be an integer number of seconds, got " + quoted(v));
    }
    long n = ((Number) v).longValue();
    if (n < 1 || n > MAX_RECONCILE_SECS) {
      throw new CliException(label + " must be between 1 and " + MAX_RECONCILE_SECS + " seconds, got " + n);
    }
    return (int) n;
  }

  static int bounded(String label, Object v, long min, long max, String unit) {
    if (!(v instanceof Integer || v instanceof Long || v instanceof Short)) {
      throw new CliException(label + " must be an integer number of " + unit + ", got " + quoted(v));
    }
    long n = ((Number) v).longValue();
    if (n < min || n > max) {
      throw new CliException(label + " must be between " + min + " and " + max + " " + unit + ", got " + n);
    }
    return (int) n;
  }

  private static long integer(String label, String v, String unit) {
    try {
      return Long.parseLong(v.strip());
    } catch (NumberFormatException e) {
      throw new CliException(label + " must be an integer number of " + unit + ", got '" + v + "'");
    }
  }

  static String host(String label, Object v) {
    if (!(v instanceof String s) || !IPV4.matcher(s.strip()).matches()) {
      throw new CliException(label + " must be an IPv4 address of this machine (the interface to bind and"
          + " advertise), got " + quoted(v));
    }
    return s.strip();
  }

  /** Member entries {@code host} or {@code host:port}; an empty list means "start a new cluster". */
  static List<String> members(String label, List<String> raw) {
    List<String> out = new ArrayList<>(raw.size());
    for (String entry : raw) {
      String e = entry == null ? "" : entry.strip();
      int colon = e.lastIndexOf(':');
      String h = colon < 0 ? e : e.substring(0, colon);
      boolean ok = !h.isEmpty() && (IPV4.matcher(h).matches() || HOST_NAME.matcher(h).matches());
      if (ok && colon >= 0) {
        String p = e.substring(colon + 1);
        ok = p.matches("[0-9]{1,5}") && Integer.parseInt(p) >= 1 && Integer.parseInt(p) <= 65535;
      }
      if (!ok) {
        throw new CliException(label + " entry '" + entry + "' is not host or host:port (port 1..65535)");
      }
      out.add(e);
    }
    return List.copyOf(out);
  }

  private static List<String> strings(String label, Object v) {
    if (v instanceof List<?> list && list.stream().allMatch(o -> o instanceof String)) {
      List<String> out = new ArrayList<>();
      list.forEach(o -> out.add((String) o));
      return out;
    }
    throw new CliException(label + " must be an array of strings");
  }

  private static String quoted(Object v) {
    return v instanceof String s ? "'" + s + "'" : String.valueOf(v);
  }
}
