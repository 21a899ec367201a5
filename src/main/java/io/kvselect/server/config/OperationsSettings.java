package io.kvselect.server.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an operator sets around the selection service itself: access control, TLS, the workers
 * file, the drain on SIGTERM and worker liveness. Immutable; built by {@link OperationsDraft}.
 *
 * <p>Invariants after parsing: {@code authToken} is null exactly when {@code authTokenFile} is
 * null, and otherwise non-empty (the file's content, trimmed); {@code tlsCert} and {@code tlsKey}
 * are both null or both readable files; {@code authOpen} holds route names (the first path segment,
 * such as {@code health}), never blank; {@code workersFilePollSecs > 0}; {@code drainTimeoutSecs
 * > 0}; {@code livenessGraceSecs >= 0} (0 turns liveness off). {@link #toString()} never shows
 * the token.
 *
 * @param authTokenFile file holding the bearer token, or null when every route is open
 * @param authToken the token (trimmed file content), or null
 * @param authOpen routes answered without a token when a token is set
 * @param tlsCert PEM certificate chain for HTTPS, or null for plain HTTP
 * @param tlsKey PEM private key for HTTPS, or null
 * @param workersFile JSON or YAML list of worker registrations, or null
 * @param workersFilePollSecs how often the workers file is checked for changes
 * @param drainTimeoutSecs longest a SIGTERM drain waits for in-flight requests
 * @param livenessGraceSecs how long a rank's event connection may stay down before its worker is
 *     made unschedulable; 0 = liveness off
 */
public record OperationsSettings(
    Path authTokenFile,
    String authToken,
    List<String> authOpen,
    Path tlsCert,
    Path tlsKey,
    Path workersFile,
    double workersFilePollSecs,
    double drainTimeoutSecs,
    double livenessGraceSecs) {

  public OperationsSettings {
    authOpen = List.copyOf(authOpen);
  }

  /** Whether requests must carry the bearer token. */
  public boolean authEnabled() {
    return authToken != null;
  }

  /** Whether the HTTP server speaks TLS. */
  public boolean tlsEnabled() {
    return tlsCert != null;
  }

  /** Whether worker liveness is watched. */
  public boolean livenessEnabled() {
    return livenessGraceSecs > 0;
  }

  public Duration drainTimeout() {
    return Duration.ofNanos((long) (drainTimeoutSecs * 1e9));
  }

  public Duration livenessGrace() {
    return Duration.ofNanos((long) (livenessGraceSecs * 1e9));
  }

  public Duration workersFilePoll() {
    return Duration.ofNanos((long) (workersFilePollSecs * 1e9));
  }

  /** The {@code operations} section of {@code GET /config}; the token itself is never included. */
  public Map<String, Object> configJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("auth_token_file", authTokenFile == null ? null : authTokenFile.toString());
    m.put("auth_open", authOpen);
    m.put("tls_cert", tlsCert == null ? null : tlsCert.toString());
    m.put("tls_key", tlsKey == null ? null : tlsKey.toString());
    m.put("workers_file", workersFile == null ? null : workersFile.toString());
    m.put("workers_file_poll_secs", workersFilePollSecs);
    m.put("drain_timeout_secs", drainTimeoutSecs);
    m.put("liveness_grace_secs", livenessGraceSecs);
    return m;
  }

  @Override
  public String toString() {
    return "OperationsSettings" + configJson();
  }
}
