package io.kvselect.server.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The {@code operations} part of {@link SettingsDraft}: the config section {@code operations},
 * the {@code KVSELECT_*} variables below and the {@link OperationsOptions} flags, layered in that
 * order, each value checked as it is applied and labelled with its source. Files (token, TLS
 * material, workers file) are checked once in {@link #validate()}. Confined to the parsing thread.
 */
final class OperationsDraft {

  static final String AUTH_TOKEN_FILE_ENV = "KVSELECT_AUTH_TOKEN_FILE";
  static final String AUTH_OPEN_ENV = "KVSELECT_AUTH_OPEN";
  static final String TLS_CERT_ENV = "KVSELECT_TLS_CERT";
  static final String TLS_KEY_ENV = "KVSELECT_TLS_KEY";
  static final String WORKERS_FILE_ENV = "KVSELECT_WORKERS_FILE";
  static final String WORKERS_FILE_POLL_ENV = "KVSELECT_WORKERS_FILE_POLL_SECS";
  static final String DRAIN_TIMEOUT_ENV = "KVSELECT_DRAIN_TIMEOUT_SECS";
  static final String LIVENESS_GRACE_ENV = "KVSELECT_LIVENESS_GRACE_SECS";

  /** Every variable read here, in {@code --help} order. */
  static final List<String> VARIABLES =
      List.of(
          AUTH_TOKEN_FILE_ENV,
          AUTH_OPEN_ENV,
          TLS_CERT_ENV,
          TLS_KEY_ENV,
          WORKERS_FILE_ENV,
          WORKERS_FILE_POLL_ENV,
          DRAIN_TIMEOUT_ENV,
          LIVENESS_GRACE_ENV);

  static final String SECTION = "operations";
  private static final Set<String> KEYS =
      Set.of(
          "auth_token_file",
          "auth_open",
          "tls_cert",
          "tls_key",
          "workers_file",
          "workers_file_poll_secs",
          "drain_timeout_secs",
          "liveness_grace_secs");
  private static final Pattern ROUTE = Pattern.compile("[a-z0-9_.-]+");

  /** Longer than any real grace or timeout, short enough to stay a valid {@code Duration} in nanoseconds. */
  private static final double MAX_SECS = 86_400.0;

  private Path authTokenFile;
  private List<String> authOpen = List.of("health", "ready");
  private Path tlsCert;
  private Path tlsKey;
  private Path workersFile;
  private double workersFilePollSecs = 2.0;
  private double drainTimeoutSecs = 10.0;
  private double livenessGraceSecs = 0.0;
  private String authToken;

  /** Applies the {@code operations} section of a config document (absent: nothing changes). */
  void applyJson(Map<String, Object> section) {
    for (String key : section.keySet()) {
      if (!KEYS.contains(key)) {
        throw new CliException("config field " + SECTION + "." + key + " is not a known setting");
      }
    }
    if (section.containsKey("auth_token_file")) {
      authTokenFile = optionalPath(field("auth_token_file"), section.get("auth_token_file"));
    }
    if (section.containsKey("auth_open")) {
      authOpen = routes(field("auth_open"), strings(field("auth_open"), section.get("auth_open")));
    }
    if (section.containsKey("tls_cert")) {
      tlsCert = optionalPath(field("tls_cert"), section.get("tls_cert"));
    }
    if (section.containsKey("tls_key")) {
      tlsKey = optionalPath(field("tls_key"), section.get("tls_key"));
    }
    if (section.containsKey("workers_file")) {
      workersFile = optionalPath(field("workers_file"), section.get("workers_file"));
    }
    if (section.containsKey("workers_file_poll_secs")) {
      workersFilePollSecs =
          positive(
              field("workers_file_poll_secs"),
              number(field("workers_file_poll_secs"), section.get("workers_file_poll_secs")));
    }
    if (section.containsKey("drain_timeout_secs")) {
      drainTimeoutSecs =
          positive(
              field("drain_timeout_secs"),
              number(field("drain_timeout_secs"), section.get("drain_timeout_secs")));
    }
    if (section.containsKey("liveness_grace_secs")) {
      livenessGraceSecs =
          nonNegative(
              field("liveness_grace_secs"),
              number(field("liveness_grace_secs"), section.get("liveness_grace_secs")));
    }
  }

  /** Applies the {@code KVSELECT_*} operations variables that are set and not blank. */
  void applyEnv(Map<String, String> env) {
    String v;
    if ((v = value(env, AUTH_TOKEN_FILE_ENV)) != null) {
      authTokenFile = path(AUTH_TOKEN_FILE_ENV, v);
    }
    if ((v = value(env, AUTH_OPEN_ENV)) != null) {
      authOpen = routes(AUTH_OPEN_ENV, List.of(v.split(",", -1)));
    }
    if ((v = value(env, TLS_CERT_ENV)) != null) {
      tlsCert = path(TLS_CERT_ENV, v);
    }
    if ((v = value(env, TLS_KEY_ENV)) != null) {
      tlsKey = path(TLS_KEY_ENV, v);
    }
    if ((v = value(env, WORKERS_FILE_ENV)) != null) {
      workersFile = path(WORKERS_FILE_ENV, v);
    }
    if ((v = value(env, WORKERS_FILE_POLL_ENV)) != null) {
      workersFilePollSecs = positive(WORKERS_FILE_POLL_ENV, parse(WORKERS_FILE_POLL_ENV, v));
    }
    if ((v = value(env, DRAIN_TIMEOUT_ENV)) != null) {
      drainTimeoutSecs = positive(DRAIN_TIMEOUT_ENV, parse(DRAIN_TIMEOUT_ENV, v));
    }
    if ((v = value(env, LIVENESS_GRACE_ENV)) != null) {
      livenessGraceSecs = nonNegative(LIVENESS_GRACE_ENV, parse(LIVENESS_GRACE_ENV, v));
    }
  }

  /** Applies the flags that were given. */
  void applyFlags(OperationsOptions o) {
    if (o.authTokenFile != null) {
      authTokenFile = o.authTokenFile;
    }
    if (o.authOpen != null) {
      authOpen = routes("--auth-open", o.authOpen);
    }
    if (o.tlsCert != null) {
      tlsCert = o.tlsCert;
    }
    if (o.tlsKey != null) {
      tlsKey = o.tlsKey;
    }
    if (o.workersFile != null) {
      workersFile = o.workersFile;
    }
    if (o.workersFilePollSecs != null) {
      workersFilePollSecs = positive("--workers-file-poll-secs", o.workersFilePollSecs);
    }
    if (o.drainTimeoutSecs != null) {
      drainTimeoutSecs = positive("--drain-timeout-secs", o.drainTimeoutSecs);
    }
    if (o.livenessGraceSecs != null) {
      livenessGraceSecs = nonNegative("--liveness-grace-secs", o.livenessGraceSecs);
    }
  }

  /** Reads the token and checks the files once every layer is applied. */
  void validate() {
    authToken = null;
    if (authTokenFile != null) {
      String token = read("--auth-token-file", authTokenFile).strip();
      if (token.isEmpty()) {
        throw new CliException(
            "--auth-token-file " + authTokenFile + " is empty (the token is its trimmed content)");
      }
      authToken = token;
    }
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new CliException(
          "--tls-cert and --tls-key must be given together (got only "
              + (tlsCert != null ? "--tls-cert" : "--tls-key")
              + ")");
    }
    if (tlsCert != null) {
      readable("--tls-cert", tlsCert);
      readable("--tls-key", tlsKey);
    }
    if (workersFile != null) {
      readable("--workers-file", workersFile);
      String name =
          workersFile.getFileName() == null
              ? ""
              : workersFile.getFileName().toString().toLowerCase(Locale.ROOT);
      if (!(name.endsWith(".json") || name.endsWith(".yaml") || name.endsWith(".yml"))) {
        throw new CliException(
            "--workers-file " + workersFile + " must end in .json, .yaml or .yml");
      }
    }
  }

  OperationsSettings build() {
    return new OperationsSettings(
        authTokenFile,
        authToken,
        authOpen,
        tlsCert,
        tlsKey,
        workersFile,
        workersFilePollSecs,
        drainTimeoutSecs,
        livenessGraceSecs);
  }

  /** The built-in defaults, for {@code --help}. */
  static OperationsSettings defaults() {
    return new OperationsDraft().build();
  }

  private static String field(String key) {
    return "config field " + SECTION + "." + key;
  }

  private static String value(Map<String, String> env, String name) {
    String v = env.get(name);
    return v == null || v.isBlank() ? null : v.strip();
  }

  private static Path optionalPath(String label, Object v) {
    if (v == null) {
      return null;
    }
    if (!(v instanceof String s) || s.isBlank()) {
      throw new CliException(label + " must be a file path or null");
    }
    return path(label, s);
  }

  private static Path path(String label, String s) {
    try {
      return Path.of(s.strip());
    } catch (InvalidPathException e) {
      throw new CliException(label + " '" + s + "' is not a valid path: " + e.getReason());
    }
  }

  private static List<String> strings(String label, Object v) {
    if (v instanceof List<?> list) {
      List<String> out = new ArrayList<>();
      for (Object o : list) {
        if (!(o instanceof String s)) {
          throw new CliException(label + " must be an array of route names");
        }
        out.add(s);
      }
      return out;
    }
    throw new CliException(label + " must be an array of route names");
  }

  /** Route names such as {@code health} or {@code /metrics}; {@code none} alone means no open route. */
  static List<String> routes(String label, List<String> raw) {
    List<String> out = new ArrayList<>();
    for (String r : raw) {
      String s = r.strip().toLowerCase(Locale.ROOT);
      s = s.startsWith("/") ? s.substring(1) : s;
      if (s.equals("none") && raw.size() == 1) {
        return List.of();
      }
      if (!ROUTE.matcher(s).matches()) {
        throw new CliException(
            label
                + " entry '"
                + r
                + "' is not a route name (such as health, ready, metrics)"
                + " or 'none'");
      }
      if (!out.contains(s)) {
        out.add(s);
      }
    }
    return List.copyOf(out);
  }

  private static double number(String label, Object v) {
    if (v instanceof Number n) {
      return n.doubleValue();
    }
    throw new CliException(label + " must be a number of seconds");
  }

  private static double parse(String label, String v) {
    try {
      return Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new CliException(label + " must be a number of seconds, got '" + v + "'");
    }
  }

  private static double positive(String label, double v) {
    if (!(v > 0.0) || v > MAX_SECS) {
      throw new CliException(
          label + " must be > 0 and <= " + (long) MAX_SECS + " seconds, got " + v);
    }
    return v;
  }

  private static double nonNegative(String label, double v) {
    if (!(v >= 0.0) || v > MAX_SECS) {
      throw new CliException(
          label + " must be between 0 (off) and " + (long) MAX_SECS + " seconds, got " + v);
    }
    return v;
  }

  private static void readable(String label, Path p) {
    if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
      throw new CliException(label + " " + p + " is not a readable file");
    }
  }

  private static String read(String label, Path p) {
    readable(label, p);
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CliException(
          label + " " + p + " cannot be read (" + e.getClass().getSimpleName() + ")");
    }
  }
}
