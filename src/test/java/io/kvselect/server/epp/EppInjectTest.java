package io.kvselect.server.epp;

import static io.kvselect.server.epp.EnvoyStream.setHeader;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * With {@code --epp-inject-token-ids} a text completion prompt is forwarded as the token ids it
 * rendered to: the body is rewritten (other fields kept) and {@code Content-Length} is the new
 * body's; a chat body goes on unchanged.
 */
class EppInjectTest {

  @Test
  void aCompletionIsForwardedWithItsTokenIdsAndTheRightLength() throws Exception {
    try (RenderServer render = new RenderServer();
        EppNode node =
            new EppNode(Map.of(), "--epp-render-url", render.url(), "--epp-inject-token-ids")) {
      node.worker(1, "inj", "http://127.0.0.1:18301");
      EnvoyStream s = node.stream();
      String body = "{\"model\":\"inj\",\"max_tokens\":3,\"prompt\":\"abcd\"}";
      s.headers("/v1/completions", Map.of(), null, false).body(body, true);
      ProcessingResponse h = s.next();
      ProcessingResponse b = s.next();
      String forwarded =
          b.getRequestBody()
              .getResponse()
              .getBodyMutation()
              .getStreamedResponse()
              .getBody()
              .toStringUtf8();
      JsonNode json = EppNode.JSON.readTree(forwarded);
      assertEquals(EppNode.JSON.readTree("[97,98,99,100]"), json.get("prompt"));
      assertEquals(3, json.get("max_tokens").asInt(), "other fields kept");
      assertEquals(
          Integer.toString(forwarded.getBytes(java.nio.charset.StandardCharsets.UTF_8).length),
          setHeader(h, "content-length"),
          "Content-Length of the rewritten body");
      assertTrue(forwarded.length() != body.length());
      s.cancel();

      EnvoyStream chat = node.stream();
      String chatBody =
          "{\"model\":\"inj\",\"messages\":[{\"role\":\"user\",\"content\":\"abcd\"}]}";
      chat.headers("/v1/chat/completions", Map.of(), null, false).body(chatBody, true);
      chat.next();
      assertEquals(
          chatBody,
          chat.next()
              .getRequestBody()
              .getResponse()
              .getBodyMutation()
              .getStreamedResponse()
              .getBody()
              .toStringUtf8(),
          "chat bodies are not rewritten");
      chat.cancel();
    }
  }
}
