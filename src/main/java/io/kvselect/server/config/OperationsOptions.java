package io.kvselect.server.config;

import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The operations flags of {@link KvselectCommand} (a picocli mixin): every option is boxed and
 * null when absent, so that {@link OperationsDraft} layers it over the config file and the
 * environment. A mutable picocli target confined to the parsing thread.
 */
public final class OperationsOptions {

  @Option(
      names = "--auth-token-file",
      paramLabel = "FILE",
      description =
          "Require 'Authorization: Bearer <token>'; the token is the file's trimmed content.")
  Path authTokenFile;

  @Option(
      names = "--auth-open",
      paramLabel = "ROUTE",
      split = ",",
      description = "Routes answered without the token, or 'none' (health,ready).")
  List<String> authOpen;

  @Option(
      names = "--tls-cert",
      paramLabel = "PEM",
      description = "Serve HTTPS with this PEM certificate chain; needs --tls-key.")
  Path tlsCert;

  @Option(names = "--tls-key", paramLabel = "PEM", description = "PEM private key for --tls-cert.")
  Path tlsKey;

  @Option(
      names = "--workers-file",
      paramLabel = "FILE",
      description = "JSON or YAML list of POST /workers bodies, applied at start and on change.")
  Path workersFile;

  @Option(
      names = "--workers-file-poll-secs",
      paramLabel = "SECS",
      description = "How often the workers file is checked for changes, > 0 (2).")
  Double workersFilePollSecs;

  @Option(
      names = "--drain-timeout-secs",
      paramLabel = "SECS",
      description = "Longest wait for in-flight requests on SIGTERM, > 0 (10).")
  Double drainTimeoutSecs;

  @Option(
      names = "--liveness-grace-secs",
      paramLabel = "SECS",
      description =
          "Make a worker unschedulable once an event connection stayed down this long; 0 = off (0).")
  Double livenessGraceSecs;
}
