package io.kvselect.tools.mock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The mocker's admission endpoint on its own, and a kvselect node under the kvc policy asking it
 * (registered by {@code --register}), plus an endpoint that never answers (a timeout is a reject).
 */
class MockAdmissionTest {

  static KvselectNode kvcNode() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {"--host", "127.0.0.1", "--port", "0"},
            Map.of("KVSELECT_ROUTER_POLICY", "kvc", "DYN_ROUTER_USE_KV_EVENTS", "false"));
    return KvselectNode.start(s, 1)
        .toCompletionStage()
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS);
  }

  static String tokens(int n) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 1; i <= n; i++) {
      b.append(i == 1 ? "" : ",").append(i);
    }
    return b.append(']').toString();
  }

  @Test
  void theMockersAdmissionEndpointDrivesTheKvcBlock() throws Exception {
    KvselectNode node = kvcNode();
    try {
      String url = "http://127.0.0.1:" + node.port();
      MockerMain cli = new MockerMain();
      // one engine, 16 blocks of 4 tokens: K_d = 64, rho * K_d = 60.8
      MockerMain.commandLine(cli)
          .parseArgs(
              "--engines",
              "1",
              "--block-size",
              "4",
              "--num-gpu-blocks",
              "16",
              "--register",
              url,
              "--worker-id-base",
              "7");
      try (MockFleet fleet =
          MockerMain.run(
              cli.options(),
              new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
        String engine = fleet.engines().get(0).endpoint();
        JsonNode w = MockClient.call("GET", url + "/workers", null).body().get(0);
        assertEquals(engine + "/admit", w.get("admission_endpoint").asText(), w.toString());

        MockClient.Reply direct =
            MockClient.call(
                "POST",
                engine + "/admit",
                "{\"session_id\":\"s\",\"turn\":0,\"input_tokens\":20,\"append_tokens\":20}");
        assertEquals(200, direct.status());
        assertEquals(true, direct.body().get("can_admit").asBoolean());
        assertEquals("seed", direct.body().get("mode").asText());
        MockClient.Reply bad =
            MockClient.call("POST", engine + "/admit", "{\"session_id\":\"s\",\"input_tokens\":1}");
        assertEquals(400, bad.status(), "append_tokens missing");

        JsonNode first =
            MockClient.call(
                    "POST",
                    url + "/select_and_reserve",
                    "{\"session_id\":\"s\",\"token_ids\":" + tokens(24) + "}")
                .body();
        assertEquals("seed", first.get("kvc").get("mode").asText(), first.toString());
        assertEquals(7, first.get("worker_id").asLong());
        MockClient.Reply gen =
            MockClient.call(
                "POST",
                engine + "/generate",
                "{\"session_id\":\"s\",\"token_ids\":" + tokens(24) + ",\"output_tokens\":4}");
        assertEquals(200, gen.status(), gen.body().toString());

        JsonNode second =
            MockClient.call(
                    "POST",
                    url + "/select_and_reserve",
                    "{\"session_id\":\"s\",\"token_ids\":" + tokens(32) + "}")
                .body();
        assertEquals(
            "direct",
            second.get("kvc").get("mode").asText(),
            "the engine holds 28 tokens: " + second);

        JsonNode third =
            MockClient.call(
                    "POST",
                    url + "/select_and_reserve",
                    "{\"session_id\":\"s\",\"token_ids\":" + tokens(40) + "}")
                .body();
        assertEquals(
            "fallback",
            third.get("kvc").get("mode").asText(),
            "28 + 40 > 60.8 (literal): " + third);
        assertEquals(1, third.get("kvc").get("attempts").size(), "one decode worker: one probe");
        assertEquals(
            "no-d-capacity", third.get("kvc").get("attempts").get(0).get("reason").asText());
      }
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void anAdmissionEndpointThatNeverAnswersIsARejectByTimeout() throws Exception {
    Vertx vertx = Vertx.vertx();
    KvselectNode node = kvcNode();
    try {
      HttpServer silent =
          vertx
              .createHttpServer()
              .requestHandler(req -> {})
              .listen(0, "127.0.0.1")
              .toCompletionStage()
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
      String url = "http://127.0.0.1:" + node.port();
      for (int id = 1; id <= 2; id++) {
        MockClient.Reply r =
            MockClient.call(
                "POST",
                url + "/workers",
                "{\"worker_id\":"
                    + id
                    + ",\"endpoint\":\"http://w"
                    + id
                    + ":1\",\"block_size\":4,\"worker_type\":\"decode\","
                    + "\"admission_endpoint\":\"http://127.0.0.1:"
                    + silent.actualPort()
                    + "/admit\"}");
        assertEquals(201, r.status(), r.body().toString());
      }
      JsonNode b =
          MockClient.call(
                  "POST",
                  url + "/select_and_reserve",
                  "{\"session_id\":\"q\",\"token_ids\":[1,2,3,4]}")
              .body();
      assertEquals("fallback", b.get("kvc").get("mode").asText(), b.toString());
      assertEquals(1, b.get("kvc").get("attempts").size());
      assertEquals("admission-timeout", b.get("kvc").get("attempts").get(0).get("reason").asText());
      String metrics =
          java.net.http.HttpClient.newBuilder()
              .version(java.net.http.HttpClient.Version.HTTP_1_1)
              .connectTimeout(java.time.Duration.ofSeconds(5))
              .build()
              .send(
                  java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/metrics"))
                      .timeout(java.time.Duration.ofSeconds(20))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body();
      assertTrue(
          metrics.contains("kvselect_kvc_rejects_total{reason=\"admission-timeout\"} 1.0"),
          metrics);
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
