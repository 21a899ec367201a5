package io.kvselect.server;

import io.kvselect.server.config.NodeSettings;
import java.util.List;

/** The few short lines a node logs once it listens: address, index mode, config file. Stateless. */
final class StartupSummary {

  private StartupSummary() {}

  static List<String> lines(NodeSettings s, int port) {
    var r = s.router();
    String mode =
        r.index().useKvEvents() && r.cost().overlapScoreCredit() > 0
            ? "events (index fed by the engines' KV events, " + s.threads() + " indexer threads)"
            : "approximate (index predicted from selections, no KV events)";
    var ops = s.operations();
    List<String> lines =
        new java.util.ArrayList<>(
            List.of(
                "kvselect listening on "
                    + (ops.tlsEnabled() ? "https" : "http")
                    + "://"
                    + s.host()
                    + ":"
                    + port
                    + (!ops.authEnabled()
                        ? ""
                        : ops.authOpen().isEmpty()
                            ? " (bearer token required on every route)"
                            : " (bearer token required except for /"
                                + String.join(", /", ops.authOpen())
                                + ")"),
                "mode: " + mode,
                "config: "
                    + (s.configFile() == null ? "built-in defaults" : s.configFile().toString())
                    + " (+ DYN_ROUTER_* environment and flags)"));
    if (ops.workersFile() != null) {
      lines.add(
          "workers file: "
              + ops.workersFile()
              + " (checked every "
              + ops.workersFilePollSecs()
              + " s)");
    }
    if (ops.livenessEnabled()) {
      lines.add(
          "liveness: a worker unreachable for "
              + ops.livenessGraceSecs()
              + " s becomes unschedulable");
    }
    return lines;
  }
}
