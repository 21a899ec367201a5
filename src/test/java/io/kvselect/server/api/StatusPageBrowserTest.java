package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.testing.ChildProcess;
import io.kvselect.tools.mock.MockFleet;
import io.kvselect.tools.mock.MockerMain;
import io.kvselect.tools.mock.MockerOptions;
import io.kvselect.tools.mock.ReplayLayout;
import io.kvselect.tools.mock.TimingModel;
import io.kvselect.tools.mock.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The status page in headless Chromium (Debian's {@code chromium} driven by
 * {@code src/test/ui/status-page.js} through playwright-core): against a live node with two
 * registered mock engines and one incomplete worker, the page lists every worker with its
 * lifecycle, reasons and listener state, shows a hostile model name as text, and updates its
 * booking count and load bars after a selection; it labels every figure with its scope (this node,
 * cluster, or this member's share of a shared table), shows each listener's last error, and the
 * node's version, mode and session affinity; and after a few selections its plots of the last
 * minutes ({@code GET /ui/history}) have points. Writes {@code target/ui/status-page.png}.
 *
 * <p>Chromium, node and the script's {@code node_modules} ({@code npm ci} in {@code src/test/ui})
 * are required: {@code .ci/run} installs them, and the test fails without them.
 */
class StatusPageBrowserTest {

  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path UI_DIR = Path.of("src/test/ui");
  static final String HOSTILE = "<img src=x id=pwn onerror=alert(1)>";

  @Test
  void pageShowsTheWorkersAndFollowsASelection() throws Exception {
    assertTrue(
        Files.isExecutable(CHROMIUM),
        CHROMIUM + " is missing: apt-get install chromium (.ci/run does)");
    assertTrue(
        Files.isDirectory(UI_DIR.resolve("node_modules/playwright-core")),
        "playwright-core is missing: run `npm ci` in " + UI_DIR + " (.ci/run does)");
    Path out = Path.of("target/ui").toAbsolutePath();
    Files.createDirectories(out);
    Path screenshot = out.resolve("status-page.png");
    Files.deleteIfExists(screenshot);
    Path profile = Files.createTempDirectory(out, "chromium-profile-");

    try (NodeHarness node = new NodeHarness(Map.of(), "--session-affinity-ttl-secs", "600")) {
      String base = "http://127.0.0.1:" + node.node.port();
      MockerOptions o =
          new MockerOptions(
              2,
              1,
              256,
              4,
              WireFormat.MAP,
              "127.0.0.1",
              0,
              base,
              new TimingModel(0, 0, 1),
              null,
              null,
              1,
              "",
              ReplayLayout.TOPIC,
              64L);
      try (MockFleet fleet =
          MockerMain.run(
              o, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
        Map<String, Object> hostile = new LinkedHashMap<>();
        hostile.put("worker_id", 9);
        hostile.put("model_name", HOSTILE);
        hostile.put("endpoint", "http://worker-9:8000");
        hostile.put("block_size", 4);
        assertEquals(201, node.post("/workers", hostile).status());
        // the largest u64 id, its publisher not up: the listener retries
        try (java.net.ServerSocket closed =
            new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
          assertEquals(
              201,
              node.post(
                      "/workers",
                      "{\"worker_id\":18446744073709551615,\"endpoint\":\"http://worker-max:8000\","
                          + "\"block_size\":4,\"kv_events_endpoint\":\"tcp://127.0.0.1:"
                          + closed.getLocalPort()
                          + "\"}")
                  .status());
        }

        // engine 1 serves a request: its rank publishes KV events and its listener goes live
        int port = fleet.engines().get(0).httpPort();
        int[] served = IntStream.rangeClosed(100, 115).toArray();
        NodeHarness.Reply gen =
            engineCall(node, port, Map.of("token_ids", served, "output_tokens", 2));
        assertEquals(200, gen.status(), gen.raw());

        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("base", base);
        spec.put("screenshot", screenshot.toString());
        spec.put("profile", profile.toString());
        spec.put("workers", List.of("1", "2", "9", "18446744073709551615"));
        spec.put("live", List.of("1"));
        spec.put("hostile", HOSTILE);
        spec.put(
            "figures",
            List.of(
                "schedulable_workers",
                "bookings",
                "pending_selections",
                "sessions",
                "index_blocks",
                "ingest",
                "queue_depths"));
        spec.put("tokens", IntStream.rangeClosed(1, 40).toArray());
        try (ChildProcess script =
            ChildProcess.start(
                UI_DIR,
                out,
                "status-page",
                List.of("node", "status-page.js", NodeHarness.JSON.writeValueAsString(spec)))) {
          int code = script.await(120);
          assertEquals(
              0,
              code,
              "status-page.js (pid "
                  + script.pid()
                  + ") failed:\n"
                  + script.stdout()
                  + script.stderr());
          JsonNode shown =
              NodeHarness.JSON.readTree(
                  script.stdout().strip().lines().reduce((a, b) -> b).orElseThrow());
          JsonNode load =
              node.load(
                  Long.parseUnsignedLong(shown.get("worker_id").asText()),
                  shown.get("dp_rank").asInt());
          assertEquals(1, load.get("active_requests").asInt());
          assertEquals(
              load.get("potential_prefill_tokens").asLong(),
              shown.get("prefill_tokens").asLong(),
              "the bar shows the node's prefill load");
          assertTrue(shown.get("prefill_tokens").asLong() > 0);
        }
      }
    }
    assertTrue(Files.size(screenshot) > 10_000, "screenshot written: " + screenshot);
    deleteTree(profile);
  }

  private static void deleteTree(Path dir) throws java.io.IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** POST /generate on a mock engine's HTTP port. */
  private static NodeHarness.Reply engineCall(NodeHarness node, int port, Object body)
      throws Exception {
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + port + "/generate"))
                    .timeout(java.time.Duration.ofSeconds(20))
                    .header("content-type", "application/json")
                    .POST(
                        java.net.http.HttpRequest.BodyPublishers.ofString(
                            NodeHarness.JSON.writeValueAsString(body)))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    return new NodeHarness.Reply(r.statusCode(), null, r.body());
  }
}
