package io.kvselect.tools.mock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A mock engine's OpenAI surface over real HTTP: the render routes and {@code /tokenize} agree
 * (one token per character of {@code role:content\n}), a completion reports the prefix its
 * simulated cache held in {@code usage.prompt_tokens_details.cached_tokens} (JSON and SSE with
 * {@code include_usage}), {@code /health} answers, and bad input is a 400.
 */
class MockOpenAiTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> post(String base, String path, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(10))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void renderCompleteAndReportCachedTokens() throws Exception {
    try (MockFleet fleet =
        MockerMain.run(
            MockerOptions.local(1, 1, 256, 4, WireFormat.MAP),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
      String base = fleet.engines().get(0).endpoint();
      assertEquals(
          200,
          http.send(
                  HttpRequest.newBuilder(URI.create(base + "/health")).build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode());
      String chat =
          "{\"model\":\"m\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":\"abcdefgh\"}]}";
      JsonNode rendered = JSON.readTree(post(base, "/v1/chat/completions/render", chat).body());
      assertEquals(14, rendered.get("token_ids").size(), "user:abcdefgh\\n is 14 characters");
      assertEquals('u', rendered.get("token_ids").get(0).asInt());
      assertEquals(
          rendered.get("token_ids"),
          JSON.readTree(post(base, "/tokenize", chat).body()).get("tokens"));
      assertEquals(
          3,
          JSON.readTree(post(base, "/v1/completions/render", "{\"prompt\":\"xyz\"}").body())
              .get("token_ids")
              .size());

      JsonNode first = JSON.readTree(post(base, "/v1/chat/completions", chat).body());
      assertEquals(0, first.at("/usage/prompt_tokens_details/cached_tokens").asInt());
      assertEquals(14, first.at("/usage/prompt_tokens").asInt());
      assertEquals("tok tok tok", first.at("/choices/0/message/content").asText());

      String longer =
          "{\"model\":\"m\",\"stream\":true,\"stream_options\":{\"include_usage\":true},\"max_tokens\":2,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"abcdefgh\"},{\"role\":\"assistant\",\"content\":\"ok\"}]}";
      HttpResponse<String> sse = post(base, "/v1/chat/completions", longer);
      assertEquals("text/event-stream", sse.headers().firstValue("content-type").orElse(""));
      assertTrue(sse.body().endsWith("data: [DONE]\n\n"), sse.body());
      JsonNode usage = null;
      for (String line : sse.body().split("\n")) {
        if (line.startsWith("data: {") && line.contains("\"usage\"")) {
          usage = JSON.readTree(line.substring(6)).get("usage");
        }
      }
      assertEquals(
          12,
          usage.at("/prompt_tokens_details/cached_tokens").asInt(),
          "the first 3 blocks of 4 (user:abcdefg) were cached by the first request");

      HttpResponse<String> noUsage =
          post(base, "/v1/completions", "{\"prompt\":\"abc\",\"stream\":true}");
      assertTrue(
          !noUsage.body().contains("\"usage\""),
          "usage only with include_usage, as OpenAI sends it");
      assertEquals(400, post(base, "/v1/chat/completions", "{\"messages\":[]}").statusCode());
      assertEquals(
          400, post(base, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":-1}").statusCode());
      assertEquals(400, post(base, "/v1/completions/render", "{\"prompt\":7}").statusCode());
    }
  }
}
