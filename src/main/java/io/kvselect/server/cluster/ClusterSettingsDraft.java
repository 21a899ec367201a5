// Over 400 lines: one accumulator of the cluster settings layers (file, environment, flags), one
// checked setter per setting.
package io.kvselect.server.cluster;

import static io.kvselect.server.cluster.ClusterSettings.*;

import io.kvselect.server.config.CliException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The mutable accumulator behind the layers of {@code NodeSettings.parse}: the file section,
 * the environment, then the flags, each value checked as it is applied and labelled with its
 * source. Confined to the parsing thread.
 */
public final class ClusterSettingsDraft {

  private static final Set<String> FIELDS =
      Set.of(
          "enabled",
          "name",
          "members",
          "port",
          "host",
          "bus_port",
          "reconcile_interval_secs",
          "call_budget_ms",
          "failure_timeout_secs",
          "tls_keystore",
          "insecure");
  private static final Pattern IPV4 =
      Pattern.compile(
          "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");
  private static final Pattern HOST_NAME =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?");
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
      members =
          members(
              "config field cluster.members",
              strings("config field cluster.members", s.get("members")));
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
      reconcileIntervalSecs =
          reconcileSecs(
              "config field cluster.reconcile_interval_secs", s.get("reconcile_interval_secs"));
    }
    if (s.containsKey("call_budget_ms")) {
      callBudgetMillis =
          bounded(
              "config field cluster.call_budget_ms",
              s.get("call_budget_ms"),
              1,
              MAX_CALL_BUDGET_MS,
              "milliseconds");
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
      failureTimeoutSecs =
          bounded(
              "config field cluster.failure_timeout_secs",
              s.get("failure_timeout_secs"),
              2,
              MAX_FAILURE_TIMEOUT_SECS,
              "seconds");
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
        throw new CliException(
            RECONCILE_ENV + " must be an integer number of seconds, got '" + v + "'");
      }
      outside(RECONCILE_ENV);
    }
    v = env.get(CALL_BUDGET_ENV);
    if (v != null && !v.isBlank()) {
      callBudgetMillis =
          bounded(
              CALL_BUDGET_ENV,
              integer(CALL_BUDGET_ENV, v, "milliseconds"),
              1,
              MAX_CALL_BUDGET_MS,
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
      failureTimeoutSecs =
          bounded(
              FAILURE_TIMEOUT_ENV,
              integer(FAILURE_TIMEOUT_ENV, v, "seconds"),
              2,
              MAX_FAILURE_TIMEOUT_SECS,
              "seconds");
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
      callBudgetMillis =
          bounded(
              "--cluster-call-budget-ms",
              (long) budgetMillis,
              1,
              MAX_CALL_BUDGET_MS,
              "milliseconds");
      outside("--cluster-call-budget-ms");
    }
    if (failureSecs != null) {
      failureTimeoutSecs =
          bounded(
              "--cluster-failure-timeout-secs",
              (long) failureSecs,
              2,
              MAX_FAILURE_TIMEOUT_SECS,
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
  public void applyFlags(
      Boolean cluster,
      String name,
      List<String> members,
      Integer port,
      String host,
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
      throw new CliException(
          setOutsideFile + " requires --cluster (or cluster.enabled: true in the config file)");
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
    return new ClusterSettings(
        enabled,
        name,
        members,
        port,
        host,
        busPort,
        reconcileIntervalSecs,
        callBudgetMillis,
        failureTimeoutSecs,
        new BusSecurity(tlsKeystore, tlsPassword, insecure));
  }

  private void outside(String label) {
    if (setOutsideFile == null) {
      setOutsideFile = label;
    }
  }

  static String name(String label, Object v) {
    if (!(v instanceof String s)
        || s.isEmpty()
        || s.length() > MAX_NAME
        || !s.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new CliException(
          label
              + " must be 1.."
              + MAX_NAME
              + " printable ASCII characters without spaces, got "
              + quoted(v));
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
      throw new CliException(
          label + " must be between 1 and " + MAX_RECONCILE_SECS + " seconds, got " + n);
    }
    return (int) n;
  }

  static int bounded(String label, Object v, long min, long max, String unit) {
    if (!(v instanceof Integer || v instanceof Long || v instanceof Short)) {
      throw new CliException(
          label + " must be an integer number of " + unit + ", got " + quoted(v));
    }
    long n = ((Number) v).longValue();
    if (n < min || n > max) {
      throw new CliException(
          label + " must be between " + min + " and " + max + " " + unit + ", got " + n);
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
      throw new CliException(
          label
              + " must be an IPv4 address of this machine (the interface to bind and"
              + " advertise), got "
              + quoted(v));
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
        throw new CliException(
            label + " entry '" + entry + "' is not host or host:port (port 1..65535)");
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
