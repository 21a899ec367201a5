package io.kvselect.server;

import io.kvselect.server.config.NodeSettings;
import java.util.List;

/** The few short lines a node logs once it listens: address, index mode, config file. Stateless. */
final class StartupSummary {

  private StartupSummary() {}

  static List<String> lines(NodeSettings s, int port) {
    var r = s.router();
    String mode = r.useKvEvents() && r.overlapScoreCredit() > 0
        ? "events (index fed by the engines' KV events, " + s.threads() + " indexer threads)"
        : "approximate (index predicted from selections, no KV events)";
    return List.of(
        "kvselect listening on http://" + s.host() + ":" + port,
        "mode: " + mode,
        "config: " + (s.configFile() == null ? "built-in defaults" : s.configFile().toString())
            + " (+ DYN_ROUTER_* environment and flags)");
  }
}
