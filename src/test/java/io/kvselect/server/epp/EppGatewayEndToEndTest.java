package io.kvselect.server.epp;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.examples.EppGateway;
import io.kvselect.tools.mock.MockFleet;
import io.kvselect.tools.mock.MockerMain;
import io.kvselect.tools.mock.MockerOptions;
import io.kvselect.tools.mock.ReplayLayout;
import io.kvselect.tools.mock.TimingModel;
import io.kvselect.tools.mock.WireFormat;
import io.vertx.core.Vertx;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * End to end with every part real: an HTTP client -> the example gateway (playing Envoy) ->
 * kvselect's endpoint picker (KV events on, prompts rendered by the engines' own render route) ->
 * a mock engine's OpenAI surface streaming SSE back through the picker. A conversation's second
 * turn lands on the engine that holds its prefix, the engine's {@code cached_tokens} equals the
 * overlap kvselect predicted (counted as a match on {@code /metrics}), and no booking is left.
 */
class EppGatewayEndToEndTest {

  private static final String MODEL = "mock-llm";
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aConversationFollowsItsPrefixThroughTheGateway() throws Exception {
    Vertx gatewayVertx = Vertx.vertx();
    try (EppNode node = new EppNode(Map.of("DYN_ROUTER_USE_KV_EVENTS", "true"));
        MockFleet fleet =
            MockerMain.run(
                new MockerOptions(
                    2,
                    1,
                    512,
                    4,
                    WireFormat.MAP,
                    "127.0.0.1",
                    0,
                    "http://127.0.0.1:" + node.node.port(),
                    new TimingModel(0, 0, 1),
                    MODEL,
                    null,
                    1,
                    "",
                    ReplayLayout.TOPIC,
                    null),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        EppGateway gateway = new EppGateway(gatewayVertx, "127.0.0.1", node.node.eppPort())) {
      int port = gateway.listen(0);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> node.node.service().ready().schedulableWorkers() == 2);
      for (int c = 0; c < 3; c++) {
        String opening =
            c + " conversation begins with a question about how lighthouses were kept lit";
        long before = indexedBlocks(node);
        JsonNode one = turn(port, opening);
        if (c == 0) {
          assertEquals(0, cached(one), "the first turn of all finds nothing cached");
        }
        long engine = one.get("worker").asLong();
        // turn 1's blocks reach the index through the engine's KV events before turn 2 is picked
        long blocks = ("user:" + opening + "\n").length() / 4;
        // (the first block, "user", may already be held from an earlier conversation)
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> indexedBlocks(node) >= before + blocks - 1);
        JsonNode two = turn(port, opening, "tok tok", "and who kept them?");
        assertEquals(
            engine,
            two.get("worker").asLong(),
            "turn 2 of conversation " + c + " lands on its prefix");
        assertTrue(
            cached(two) >= blocks * 4 && cached(two) > cached(one),
            "turn 2 reuses turn 1's blocks: " + two);
      }
      String metrics = node.http("GET", "/metrics", null).body();
      assertTrue(
          metric(metrics, "kvselect_epp_cached_tokens_matches_total") >= 3,
          "every second turn's cached_tokens equals the predicted overlap:\n"
              + grep(metrics, "kvselect_epp_cached"));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> node.active(MODEL, 1) + node.active(MODEL, 2) == 0);
    } finally {
      gatewayVertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** One streamed chat turn through the gateway: the worker that answered and the usage chunk. */
  private JsonNode turn(int port, String... messages) throws Exception {
    StringBuilder b =
        new StringBuilder(
            "{\"model\":\""
                + MODEL
                + "\",\"stream\":true,\"max_tokens\":2,"
                + "\"stream_options\":{\"include_usage\":true},\"messages\":[");
    for (int i = 0; i < messages.length; i++) {
      b.append(i == 0 ? "" : ",")
          .append("{\"role\":\"")
          .append(i % 2 == 0 ? "user" : "assistant")
          .append("\",\"content\":\"")
          .append(messages[i])
          .append("\"}");
    }
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(20))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(b.append("]}").toString()))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    assertTrue(r.body().endsWith("data: [DONE]\n\n"), r.body());
    JsonNode usage = null;
    String id = null;
    for (String line : r.body().split("\n")) {
      if (line.startsWith("data: {")) {
        JsonNode n = EppNode.JSON.readTree(line.substring(6));
        id = n.get("id").asText();
        if (n.has("usage")) {
          usage = n.get("usage");
        }
      }
    }
    // the mock's completion ids are chatcmpl-<worker>-<n>
    long worker = Long.parseLong(id.split("-")[1]);
    return EppNode.JSON.createObjectNode().put("worker", worker).set("usage", usage);
  }

  private static long cached(JsonNode turn) {
    return turn.get("usage").get("prompt_tokens_details").get("cached_tokens").asLong();
  }

  private static long indexedBlocks(EppNode node) throws Exception {
    long n = 0;
    JsonNode dump = EppNode.JSON.readTree(node.http("GET", "/dump", null).body());
    for (JsonNode events : dump.findValues("events")) {
      n += events.size();
    }
    return n;
  }

  private static double metric(String text, String name) {
    for (String line : text.split("\n")) {
      if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  private static String grep(String text, String part) {
    StringBuilder b = new StringBuilder();
    for (String line : text.split("\n")) {
      if (line.contains(part)) {
        b.append(line).append('\n');
      }
    }
    return b.toString();
  }
}
