package io.kvselect.server.epp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The endpoint picker's protocol-independent parts, table-driven: no gRPC, no Vert.x. */
class EppPlainPartsTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  // ---- InferenceApi / InferenceRequest ----

  @ParameterizedTest
  @CsvSource({
    "/v1/chat/completions, CHAT_COMPLETIONS",
    "/v1/chat/completions?x=1, CHAT_COMPLETIONS",
    "/v1/chat/completions/, CHAT_COMPLETIONS",
    "/v1/completions, COMPLETIONS",
    "/v1/messages, MESSAGES",
  })
  void pathsNameTheirApi(String path, InferenceApi api) {
    assertEquals(api, InferenceApi.ofPath(path));
  }

  @Test
  void otherPathsAreNoApi() {
    assertNull(InferenceApi.ofPath("/v1/embeddings"));
    assertNull(InferenceApi.ofPath(null));
    assertNull(InferenceApi.ofPath("/v1/chat/completions/render"));
  }

  @Test
  void chatBodiesAreRenderedAsSent() {
    byte[] body = b("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    InferenceRequest r = InferenceRequest.parse(InferenceApi.CHAT_COMPLETIONS, body);
    assertEquals("m", r.model());
    assertArrayEquals(body, r.renderBody());
    assertNull(r.tokenIds());
  }

  @Test
  void completionPromptsOfTokenIdsNeedNoRender() {
    assertArrayEquals(
        new int[] {5, 6, 7},
        InferenceRequest.parse(InferenceApi.COMPLETIONS, b("{\"model\":\"m\",\"prompt\":[5,6,7]}"))
            .tokenIds());
    assertArrayEquals(
        new int[] {5},
        InferenceRequest.parse(InferenceApi.COMPLETIONS, b("{\"model\":\"m\",\"prompt\":[[5]]}"))
            .tokenIds());
    assertNull(
        InferenceRequest.parse(InferenceApi.COMPLETIONS, b("{\"model\":\"m\",\"prompt\":\"text\"}"))
            .tokenIds());
    assertNull(
        InferenceRequest.parse(InferenceApi.COMPLETIONS, b("{\"model\":\"m\",\"prompt\":[\"t\"]}"))
            .tokenIds());
  }

  @Test
  void anthropicMessagesBecomeTheEquivalentChat() throws Exception {
    InferenceRequest r =
        InferenceRequest.parse(
            InferenceApi.MESSAGES,
            b(
                "{\"model\":\"anthropic-model\",\"max_tokens\":9,"
                    + "\"system\":[{\"type\":\"text\",\"text\":\"be \"},{\"type\":\"text\",\"text\":\"brief\"}],"
                    + "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                    + "{\"type\":\"image\",\"source\":{}},{\"type\":\"text\",\"text\":\"b\"}]},"
                    + "{\"role\":\"assistant\",\"content\":\"c\"}]}"));
    JsonNode chat = JSON.readTree(r.renderBody());
    assertEquals("anthropic-model", chat.get("model").asText());
    assertEquals(
        JSON.readTree(
            "[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":\"ab\"},"
                + "{\"role\":\"assistant\",\"content\":\"c\"}]"),
        chat.get("messages"));
    assertEquals("/v1/chat/completions/render", r.api().renderPath());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "CHAT_COMPLETIONS | {\"model\":\"m\" | not valid JSON",
        "CHAT_COMPLETIONS | [1] | JSON object",
        "CHAT_COMPLETIONS | {\"messages\":[{\"role\":\"user\"}]} | `model`",
        "CHAT_COMPLETIONS | {\"model\":\"\",\"messages\":[{\"role\":\"user\"}]} | `model`",
        "CHAT_COMPLETIONS | {\"model\":\"m\",\"messages\":[]} | `messages`",
        "CHAT_COMPLETIONS | {\"model\":\"m\",\"messages\":[{\"content\":\"x\"}]} | `messages[0].role`",
        "COMPLETIONS | {\"model\":\"m\"} | `prompt`",
        "COMPLETIONS | {\"model\":\"m\",\"prompt\":[1,-2]} | `prompt[1]`",
        "COMPLETIONS | {\"model\":\"m\",\"prompt\":[1,null]} | `prompt[1]`",
        "COMPLETIONS | {\"model\":\"m\",\"prompt\":[1.5]} | `prompt[0]`",
        "COMPLETIONS | {\"model\":\"m\",\"prompt\":{}} | `prompt`",
        "MESSAGES | {\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":7}]} | `messages[0].content`",
        "MESSAGES | {\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]} "
            + "| `messages[0].content[0].text`",
      })
  void malformedBodiesAre400sNamingTheField(InferenceApi api, String body, String named) {
    EppFailure f = assertThrows(EppFailure.class, () -> InferenceRequest.parse(api, b(body)));
    assertEquals(400, f.status());
    assertTrue(f.getMessage().contains(named), f.getMessage());
  }

  // ---- Destinations and SubsetHint ----

  @ParameterizedTest
  @CsvSource({
    "http://10.0.0.1:8000, 0, 10.0.0.1:8000",
    "http://10.0.0.1:8000, 3, 10.0.0.1:8003",
    "http://pod-a:8000/v1, 0, pod-a:8000",
    "https://pod-a, 0, pod-a:443",
    "http://pod-a, 0, pod-a:80",
    "10.0.0.2:9000, 1, 10.0.0.2:9001",
    "http://[fd00::1]:8000, 0, [fd00::1]:8000",
  })
  void destinationsAreHostAndRankPort(String endpoint, int offset, String dest) {
    assertEquals(dest, Destinations.of(endpoint, offset));
  }

  @Test
  void unroutableEndpointsHaveNoDestination() {
    assertNull(Destinations.of(null, 0));
    assertNull(Destinations.of(" ", 0));
    assertNull(Destinations.of("http://h:65535", 1));
    assertNull(Destinations.of("http://:80", 0));
  }

  @Test
  void subsetHints() {
    SubsetHint any = SubsetHint.ANY;
    assertFalse(any.present());
    assertTrue(any.admits("1.2.3.4:5"));
    SubsetHint h = SubsetHint.of(List.of("10.0.0.1:8000, 10.0.0.2", "", "[fd00::1]:80", "fd00::2"));
    assertTrue(h.present());
    assertTrue(h.admits("10.0.0.1:8000"));
    assertFalse(h.admits("10.0.0.1:8001"), "a port named is that port only");
    assertTrue(h.admits("10.0.0.2:1234"), "an IP without port is any port");
    assertTrue(h.admits("[fd00::1]:80"));
    assertFalse(h.admits("[fd00::1]:81"));
    assertTrue(h.admits("[fd00::2]:7"), "a bare IPv6 address is any port");
    assertFalse(h.admits("10.0.0.3:8000"));
    assertFalse(
        SubsetHint.of(List.of()).admits("10.0.0.1:8000"), "a hint with no entry admits nothing");
  }

  // ---- StreamBooking ----

  /** Records the lifecycle steps in order. */
  private static final class Steps implements StreamBooking.Lifecycle {
    final List<String> seen = new ArrayList<>();

    @Override
    public void prefillComplete(String id) {
      seen.add("prefill " + id);
    }

    @Override
    public void free(String id) {
      seen.add("free " + id);
    }
  }

  @Test
  void theBookingFollowsAStreamToItsEnd() {
    Steps steps = new Steps();
    StreamBooking b = new StreamBooking(steps);
    b.booked("s1");
    b.responseStatus(200);
    b.responseBody(false);
    b.responseBody(false);
    b.responseBody(true);
    b.end();
    b.end();
    assertEquals(List.of("prefill s1", "free s1"), steps.seen);
    assertEquals(StreamBooking.State.ENDED, b.state());
  }

  @Test
  void anErrorStatusFreesAndNothingFollows() {
    Steps steps = new Steps();
    StreamBooking b = new StreamBooking(steps);
    b.booked("s2");
    b.responseStatus(500);
    b.responseBody(false);
    b.end();
    assertEquals(List.of("free s2"), steps.seen, "an error status frees; nothing after it");
  }

  @Test
  void trailersOrAResetAfterPrefillFreeOnce() {
    Steps steps = new Steps();
    StreamBooking b = new StreamBooking(steps);
    b.booked("s3");
    b.responseBody(false);
    b.end();
    b.responseBody(true);
    b.end();
    assertEquals(List.of("prefill s3", "free s3"), steps.seen);
  }

  @Test
  void aBookingMadeAfterTheStreamEndedIsFreedAtOnce() {
    Steps steps = new Steps();
    StreamBooking b = new StreamBooking(steps);
    b.end();
    b.booked("late");
    b.responseBody(true);
    assertEquals(List.of("free late"), steps.seen);
  }

  @Test
  void aStreamWithoutBookingReachesNoLifecycle() {
    Steps steps = new Steps();
    StreamBooking b = new StreamBooking(steps);
    b.responseBody(false);
    b.end();
    assertEquals(List.of(), steps.seen);
  }

  // ---- CachedTokens ----

  @Test
  void cachedTokensFromAStreamedUsageChunk() {
    CachedTokens c = new CachedTokens();
    c.feed(b("data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"));
    assertNull(c.cachedTokens());
    c.feed(
        b(
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"prompt_tokens_details\":{\"cached"));
    c.feed(b("_tokens\":8}}}\n\ndata: [DONE]\n\n"));
    assertEquals(8, c.cachedTokens().cachedTokens());
  }

  @Test
  void cachedTokensFromAFinalJsonBodyAndAfterALongStream() {
    CachedTokens c = new CachedTokens();
    c.feed(b("{\"choices\":[],\"usage\":{\"prompt_tokens_details\":{\"cached_tokens\":16}}}"));
    assertEquals(16, c.cachedTokens().cachedTokens());
    CachedTokens longStream = new CachedTokens();
    byte[] filler =
        b("data: {\"choices\":[{\"delta\":{\"content\":\"" + "y".repeat(1000) + "\"}}]}\n\n");
    for (int i = 0; i < 200; i++) {
      longStream.feed(filler);
    }
    longStream.feed(b("data: {\"usage\":{\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n"));
    assertEquals(4, longStream.cachedTokens().cachedTokens());
  }

  // ---- failures ----

  @Test
  void selectionFailuresMapToTheGatewaysStatuses() throws Exception {
    assertEquals(503, EppFailure.of(SelectionException.notReady("none")).status());
    EppFailure shed =
        EppFailure.of(
            new java.util.concurrent.CompletionException(
                new SelectionException(
                    ErrorCode.OVERLOADED, "queue full", Map.of("limit_kind", "timeout"))));
    assertEquals(429, shed.status());
    JsonNode body = JSON.readTree(shed.body());
    assertEquals("queue full", body.get("error").asText());
    assertEquals("timeout", body.get("details").get("limit_kind").asText());
    assertEquals(400, EppFailure.of(SelectionException.unprocessable("field x")).status());
    assertEquals(400, EppFailure.of(SelectionException.notFound("gone")).status());
    assertEquals(500, EppFailure.of(new IllegalStateException("bug")).status());
  }

  @Test
  void renderAnswersAndFailures() {
    assertArrayEquals(
        new int[] {1, 2}, RenderClient.tokenIds("r", 200, b("{\"token_ids\":[1,2]}")));
    assertEquals(
        502, assertThrows(EppFailure.class, () -> RenderClient.tokenIds("r", 503, b(""))).status());
    EppFailure refused =
        assertThrows(
            EppFailure.class,
            () -> RenderClient.tokenIds("r", 422, b("{\"error\":{\"message\":\"too long\"}}")));
    assertEquals(400, refused.status());
    assertTrue(refused.getMessage().contains("too long"));
    assertEquals(
        502,
        assertThrows(EppFailure.class, () -> RenderClient.tokenIds("r", 200, b("{}"))).status());
    assertEquals(
        502,
        assertThrows(
                EppFailure.class,
                () -> RenderClient.tokenIds("r", 200, b("{\"token_ids\":[\"a\"]}")))
            .status());
  }

  @Test
  void anUnreachableRendererIs503() throws Exception {
    int closed = io.kvselect.testing.Ports.free();
    RenderClient c = new RenderClient(Duration.ofSeconds(2));
    Throwable e =
        assertThrows(
                java.util.concurrent.ExecutionException.class,
                () ->
                    c.render("http://127.0.0.1:" + closed, InferenceApi.COMPLETIONS, b("{}"))
                        .toCompletableFuture()
                        .get())
            .getCause();
    assertEquals(503, ((EppFailure) e).status(), e.toString());
  }
}
