package io.kvselect.server;

import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bin/kvselect}: parses flags, {@code --config} and {@code DYN_ROUTER_*} variables, starts
 * one node and stops it cleanly on SIGTERM. A bad flag or value exits 2 with a one-line message.
 */
public final class Launcher {

  private static final Logger LOG = LoggerFactory.getLogger(Launcher.class);

  private Launcher() {}

  public static void main(String[] args) throws Exception {
    NodeSettings settings;
    try {
      settings = NodeSettings.parse(args, System.getenv());
    } catch (CliException e) {
      System.err.println("kvselect: " + e.getMessage());
      System.exit(2);
      return;
    }
    if (settings.help()) {
      System.out.println(NodeSettings.usage());
      return;
    }
    String unsupported = unsupported(settings);
    if (unsupported != null) {
      System.err.println("kvselect: " + unsupported);
      System.exit(2);
      return;
    }
    KvselectNode node;
    try {
      node = KvselectNode.start(settings).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      System.err.println("kvselect: failed to start: " + cause.getMessage());
      System.exit(1);
      return;
    }
    LOG.info("kvselect listening on {}:{} with {}", settings.host(), node.port(), settings);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        node.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        LOG.warn("shutdown did not complete cleanly: {}", e.toString());
      }
    }, "kvselect-shutdown"));
  }

  /** Options that are validated but belong to features this node does not have yet. */
  static String unsupported(NodeSettings s) {
    if (s.replicaSyncPort() != null || !s.replicaSyncPeers().isEmpty()) {
      return "--replica-sync-port/--replica-sync-peers: replica sync is not available yet in this version";
    }
    if ("keyed-xxh3-v1".equals(s.routerTrackingHash())) {
      return "--router-tracking-hash keyed-xxh3-v1 is not available yet in this version (use public-xxh3-v1)";
    }
    return null;
  }
}
