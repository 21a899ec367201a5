package io.kvselect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.server.config.NodeSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /config} serves the effective configuration in the shape {@code --config} reads. */
class ConfigRouteTest {

  @TempDir Path dir;

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void configJsonFedBackThroughConfigYieldsTheSameSettings() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--threads",
              "2",
              "--session-affinity-ttl-secs",
              "60"
            },
            Map.of("DYN_ROUTER_TEMPERATURE", "0.5"));
    Path file = dir.resolve("effective.json");
    Files.writeString(file, JSON.writeValueAsString(s.configJson()));
    NodeSettings again = NodeSettings.parse(new String[] {"--config", file.toString()}, Map.of());
    assertEquals(s.configJson(), again.configJson());
    assertEquals(0.5, again.router().cost().temperature());
  }

  @Test
  void getConfigReturnsTheEffectiveConfiguration() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {"--host", "127.0.0.1", "--port", "0", "--threads", "3"},
            Map.of("DYN_ROUTER_QUEUE_POLICY", "wspt"));
    KvselectNode node =
        KvselectNode.start(s).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    try {
      HttpResponse<String> r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + "/config"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode());
      assertEquals(JSON.readTree(JSON.writeValueAsString(s.configJson())), JSON.readTree(r.body()));
      assertEquals(
          "wspt", JSON.readTree(r.body()).path("router").path("router_queue_policy").asText());
      assertEquals(3, JSON.readTree(r.body()).path("index").path("threads").asInt());
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
