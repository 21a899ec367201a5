package io.kvselect.server.epp;

import static io.kvselect.server.epp.EnvoyStream.setHeader;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.kvselect.server.api.OpenApiDoc;
import io.kvselect.testing.ChildProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The endpoint picker on the status page, in headless Chromium (Debian's {@code chromium} driven
 * by {@code src/test/ui/epp-panel.js} through playwright-core): a real node with
 * {@code --epp-port 0}, streams from a gRPC client built from Envoy's protos (two picks, one of
 * them still open, one response reporting more cached tokens than predicted, a 404 and a 400
 * answered immediately), then the page's picker panel shows those figures, the same as
 * {@code /metrics}, and {@code /ui/state} matches its OpenAPI schema. Writes
 * {@code target/ui/epp-panel.png}. Needs what {@code StatusPageBrowserTest} needs.
 */
class EppStatusPageBrowserTest {

  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path UI_DIR = Path.of("src/test/ui");

  private static String ids(int from, int toExclusive) {
    return IntStream.range(from, toExclusive)
        .mapToObj(Integer::toString)
        .collect(Collectors.joining(","));
  }

  /** A completion of {@code tokens} through the picker: the headers answer after the body answer. */
  private static ProcessingResponse pick(EnvoyStream s, String path, String body) throws Exception {
    s.headers(path, Map.of(), null, false).body(body, true);
    ProcessingResponse h = s.next();
    if (!h.hasImmediateResponse()) {
      assertTrue(s.next().hasRequestBody(), "the body answer follows");
    }
    return h;
  }

  private static long metric(String text, String line) {
    return text.lines()
        .filter(l -> l.startsWith(line + " "))
        .mapToLong(l -> (long) Double.parseDouble(l.substring(line.length() + 1).strip()))
        .sum();
  }

  @Test
  void thePickerPanelShowsStreamsPicksImmediateResponsesAndPredictions() throws Exception {
    assertTrue(
        Files.isExecutable(CHROMIUM),
        CHROMIUM + " is missing: apt-get install chromium (.ci/run does)");
    assertTrue(
        Files.isDirectory(UI_DIR.resolve("node_modules/playwright-core")),
        "playwright-core is missing: run `npm ci` in " + UI_DIR + " (.ci/run does)");
    Path out = Path.of("target/ui").toAbsolutePath();
    Files.createDirectories(out);
    Path screenshot = out.resolve("epp-panel.png");
    Files.deleteIfExists(screenshot);
    Path profile = Files.createTempDirectory(out, "chromium-profile-");
    try (EppNode node = new EppNode(Map.of(), "--epp-fallbacks", "0")) {
      String model = "m-ui";
      node.worker(61, model, "http://127.0.0.1:18161");
      String first =
          "{\"model\":\"" + model + "\",\"max_tokens\":1,\"prompt\":[" + ids(1, 33) + "]}";

      // a pick served to its end; the engine found 8 cached tokens where none were predicted
      EnvoyStream served = node.stream();
      ProcessingResponse h = pick(served, "/v1/completions", first);
      assertEquals("127.0.0.1:18161", setHeader(h, "x-gateway-destination-endpoint"));
      served.responseHeaders(200);
      served.next();
      served.responseBody(
          "{\"choices\":[],\"usage\":{\"prompt_tokens\":32,\"prompt_tokens_details\":"
              + "{\"cached_tokens\":8}}}",
          true);
      served.next();
      served.complete();
      await().atMost(Duration.ofSeconds(10)).until(() -> served.completed);

      // a pick whose stream stays open
      EnvoyStream open = node.stream();
      pick(
          open,
          "/v1/completions",
          "{\"model\":\"" + model + "\",\"max_tokens\":1,\"prompt\":[" + ids(100, 132) + "]}");

      // two requests answered immediately: not an inference route, and a malformed body
      for (String[] r :
          List.of(
              new String[] {"/v1/models", "{}"}, new String[] {"/v1/completions", "{\"model\":"})) {
        EnvoyStream s = node.stream();
        assertTrue(pick(s, r[0], r[1]).hasImmediateResponse(), r[0]);
        s.complete();
        await().atMost(Duration.ofSeconds(10)).until(() -> s.completed);
      }

      String state = node.http("GET", "/ui/state", null).body();
      assertEquals(
          List.of(), OpenApiDoc.load().violations("NodeState", state), "/ui/state: " + state);
      JsonNode epp = EppNode.JSON.readTree(state).get("epp");
      assertEquals(2, epp.get("picks").asLong(), state);

      Map<String, Object> expect = new LinkedHashMap<>();
      expect.put("streams_open", 1);
      expect.put("picks", 2);
      expect.put("immediate", Map.of("400", 1, "404", 1));
      expect.put("matches", 0);
      expect.put("over", 0);
      expect.put("under", 1);
      Map<String, Object> spec = new LinkedHashMap<>();
      spec.put("base", "http://127.0.0.1:" + node.node.port());
      spec.put("screenshot", screenshot.toString());
      spec.put("profile", profile.toString());
      spec.put("expect", expect);
      try (ChildProcess script =
          ChildProcess.start(
              UI_DIR,
              out,
              "epp-panel",
              List.of("node", "epp-panel.js", EppNode.JSON.writeValueAsString(spec)))) {
        int code = script.await(120);
        assertEquals(
            0,
            code,
            "epp-panel.js (pid "
                + script.pid()
                + ") failed:\n"
                + script.stdout()
                + script.stderr());
        JsonNode shown =
            EppNode.JSON.readTree(
                script.stdout().strip().lines().reduce((a, b) -> b).orElseThrow());
        String metrics = node.http("GET", "/metrics", null).body();
        assertEquals(
            metric(metrics, "kvselect_epp_streams_open"),
            shown.get("streams_open").asLong(),
            "the panel shows the gauge on /metrics");
        assertEquals(
            metric(metrics, "kvselect_epp_decisions_total{status=\"200\"}"),
            shown.get("picks").asLong());
        assertEquals(
            metric(metrics, "kvselect_epp_decisions_total{status=\"404\"}"),
            shown.get("immediate").get("404").asLong());
        assertEquals(
            metric(metrics, "kvselect_epp_cached_tokens_mispredictions_total{direction=\"under\"}"),
            shown.get("under").asLong());
        assertEquals("8.0 tokens", shown.get("error").asText(), "|8 observed - 0 predicted|");
      }
      open.cancel();
    }
    assertTrue(Files.size(screenshot) > 5_000, "screenshot written: " + screenshot);
    try (var paths = Files.walk(profile)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
