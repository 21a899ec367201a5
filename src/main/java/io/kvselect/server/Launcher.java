package io.kvselect.server;

import io.kvselect.server.config.CliException;
import io.kvselect.server.config.EnvironmentCheck;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.config.Version;
import java.io.PrintStream;
import java.net.BindException;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bin/kvselect}: parses flags, {@code --config} and {@code DYN_ROUTER_*} variables, starts
 * one node and drains it on SIGTERM ({@link KvselectNode#drain}, bounded by {@code
 * --drain-timeout-secs}). A bad flag or value exits 2 with a one-line message; a
 * node that cannot start (address taken, unknown host) exits 1 with one line naming the address
 * and the cause.
 */
public final class Launcher {

  private static final Logger LOG = LoggerFactory.getLogger(Launcher.class);

  /** Exit code of a usage error. */
  static final int USAGE = 2;

  /** Exit code of a node that could not start. */
  static final int FAILED = 1;

  /** What closing the node may take after the drain timeout (HTTP servers, KV-event threads). */
  static final long CLOSE_MARGIN_MS = 10_000;

  private Launcher() {}

  public static void main(String[] args) {
    int code = run(args, System.getenv(), System.out, System.err);
    if (code != 0) {
      System.exit(code);
    }
  }

  /**
   * Everything {@link #main} does except exiting: returns 0 once the node listens (it keeps
   * running on its own threads, stopped by the shutdown hook), or the exit code after printing
   * one line on {@code err}.
   */
  static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
    NodeSettings settings;
    try {
      settings = NodeSettings.parse(args, env);
    } catch (CliException e) {
      err.println("kvselect: " + e.getMessage());
      return USAGE;
    }
    if (settings.version()) {
      out.println("kvselect " + Version.current());
      return 0;
    }
    if (settings.help()) {
      out.println(NodeSettings.usage());
      return 0;
    }
    String unsupported = unsupported(settings);
    if (unsupported != null) {
      err.println("kvselect: " + unsupported);
      return USAGE;
    }
    for (String warning : EnvironmentCheck.warnings(env)) {
      LOG.warn(warning);
    }
    KvselectNode node;
    try {
      node =
          KvselectNode.start(settings)
              .toCompletionStage()
              .toCompletableFuture()
              .get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      err.println("kvselect: " + startFailure(settings, e));
      return FAILED;
    }
    for (String line : StartupSummary.lines(settings, node.port())) {
      LOG.info(line);
    }
    // SIGTERM: drain (503 for /ready and new selections, in-flight requests answered), then close
    java.time.Duration drain = settings.operations().drainTimeout();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    node.drain(drain)
                        .toCompletionStage()
                        .toCompletableFuture()
                        .get(drain.toMillis() + CLOSE_MARGIN_MS, TimeUnit.MILLISECONDS);
                  } catch (Exception e) {
                    LOG.warn("shutdown did not complete cleanly: {}", e.toString());
                  }
                },
                "kvselect-shutdown"));
    return 0;
  }

  /** One line for a start that failed with {@code e}: the address for a listen failure, and the root cause. */
  static String startFailure(NodeSettings s, Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String address = s.host() + ":" + s.port();
    if (root instanceof java.util.concurrent.TimeoutException) {
      return "cannot start on " + address + ": start-up did not finish within 60 s";
    }
    String message =
        root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    if (root instanceof UnknownHostException
        || root.getClass().getName().startsWith("io.netty.resolver")) {
      return "cannot listen on " + address + ": unknown host (" + message + ")";
    }
    if (root instanceof BindException
        || root instanceof java.net.SocketException
        || root.getClass().getName().startsWith("io.netty.channel")) {
      return "cannot listen on " + address + ": " + stripBindPrefix(message);
    }
    return "failed to start: " + message;
  }

  /** Netty's native transport says {@code bind(..) failed: Address already in use}. */
  private static String stripBindPrefix(String message) {
    int i = message.indexOf("failed: ");
    return message.startsWith("bind(") && i >= 0
        ? message.substring(i + "failed: ".length())
        : message;
  }

  /** Options that are validated but belong to features this node does not have yet. */
  static String unsupported(NodeSettings s) {
    if ("keyed-xxh3-v1".equals(s.routerTrackingHash())) {
      return "--router-tracking-hash keyed-xxh3-v1 is not available yet in this version (use public-xxh3-v1)";
    }
    return null;
  }
}
