package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * docs/operations.md's metrics reference against a live node's {@code GET /metrics}: every
 * documented {@code kvselect_*} family a standalone node exports appears with a non-empty HELP,
 * and every {@code kvselect_*} family the node exports is documented. Rows marked
 * "clustered" (cluster members only) or "once a queue was used" are checked only for being documented.
 */
class MetricsReferenceTest {

  static final Pattern ROW = Pattern.compile("^\\| `(kvselect_[a-z0-9_]+)` \\|(.*)$");
  static final Pattern HELP = Pattern.compile("^# HELP (kvselect_[a-z0-9_]+) ?(.*)$");

  @Test
  void everyDocumentedMetricIsExportedWithAHelpText() throws Exception {
    Map<String, Boolean> documented = new LinkedHashMap<>();
    for (String line : Files.readAllLines(Path.of("docs/operations.md"))) {
      Matcher m = ROW.matcher(line);
      if (m.matches()) {
        documented.put(
            m.group(1),
            m.group(2).contains("clustered") || m.group(2).contains("once a queue was used"));
      }
    }
    assertTrue(documented.size() > 10, "the reference lists the metrics: " + documented);
    Map<String, String> help = new LinkedHashMap<>();
    try (NodeHarness node = new NodeHarness(Map.of())) {
      assertEquals(
          201,
          node.post(
                  "/workers",
                  "{\"worker_id\":1,\"endpoint\":\"http://w1:8000\",\"block_size\":4,"
                      + "\"kv_events_endpoint\":\"tcp://127.0.0.1:1\"}")
              .status());
      Map<String, Object> sel = new LinkedHashMap<>();
      sel.put("selection_id", "m-1");
      sel.put("token_ids", IntStream.rangeClosed(1, 16).toArray());
      assertEquals(200, node.post("/select_and_reserve", sel).status());
      assertEquals(200, node.delete("/reservations/m-1").status());
      for (String line : node.get("/metrics").raw().lines().toList()) {
        Matcher m = HELP.matcher(line);
        if (m.matches()) {
          help.put(base(m.group(1)), m.group(2).strip());
        }
      }
    }
    List<String> problems = new ArrayList<>();
    for (var e : documented.entrySet()) {
      if (e.getValue()) {
        continue;
      }
      String h = help.get(e.getKey());
      if (h == null) {
        problems.add(e.getKey() + " is not exported");
      } else if (h.isEmpty()) {
        problems.add(e.getKey() + " has an empty HELP");
      }
    }
    for (String exported : new TreeSet<>(help.keySet())) {
      if (!documented.containsKey(exported)) {
        problems.add(exported + " is exported but not documented");
      }
    }
    assertEquals(List.of(), problems);
  }

  /** The family name as documented: Prometheus' unit suffixes of a timer folded back. */
  static String base(String name) {
    return name.replaceAll("_seconds(_max)?$", "_seconds");
  }
}
