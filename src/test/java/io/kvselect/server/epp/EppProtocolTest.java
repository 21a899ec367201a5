package io.kvselect.server.epp;

import static io.kvselect.server.epp.EnvoyStream.list;
import static io.kvselect.server.epp.EnvoyStream.setHeader;
import static io.kvselect.server.epp.EnvoyStream.string;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The endpoint picker as Envoy's {@code ext_proc} filter sees it, one black-box test per protocol
 * rule: a real node with {@code --epp-port 0}, a real render server, and a gRPC client built from
 * Envoy's published protos sending headers, body chunks, response headers, streamed SSE body and
 * trailers. Each test uses a model of its own, so the partitions never meet.
 */
class EppProtocolTest {

  private static RenderServer render;
  private static EppNode node;

  @BeforeAll
  static void start() throws Exception {
    render = new RenderServer();
    node =
        new EppNode(
            Map.of(),
            "--epp-render-url",
            render.url(),
            "--epp-render-timeout-secs",
            "1",
            "--epp-fallbacks",
            "1");
  }

  @AfterAll
  static void stop() throws Exception {
    if (node != null) {
      node.close();
    }
    if (render != null) {
      render.close();
    }
  }

  private static String chat(String model, String... turns) {
    StringBuilder b =
        new StringBuilder("{\"model\":\"" + model + "\",\"stream\":true,\"messages\":[");
    for (int i = 0; i < turns.length; i++) {
      b.append(i == 0 ? "" : ",")
          .append("{\"role\":\"")
          .append(i % 2 == 0 ? "user" : "assistant")
          .append("\",\"content\":\"")
          .append(turns[i])
          .append("\"}");
    }
    return b.append("]}").toString();
  }

  /** Sends a whole request (body in two chunks) and returns the headers answer after checking the body answer. */
  private static ProcessingResponse route(
      EnvoyStream s,
      String path,
      String body,
      Map<String, String> headers,
      com.google.protobuf.Value subset)
      throws Exception {
    int half = body.length() / 2;
    s.headers(path, headers, subset, false)
        .body(body.substring(0, half), false)
        .body(body.substring(half), true);
    ProcessingResponse h = s.next();
    if (h.hasImmediateResponse()) {
      return h;
    }
    ProcessingResponse b = s.next();
    assertTrue(b.hasRequestBody(), "the body answer follows the headers answer: " + b);
    var streamed = b.getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
    assertEquals(body, streamed.getBody().toStringUtf8(), "the body goes on unchanged");
    assertTrue(streamed.getEndOfStream());
    return h;
  }

  @Test
  void aRequestIsRoutedAndItsBookingFollowsTheStream() throws Exception {
    String model = "m-route";
    node.worker(11, model, "http://127.0.0.1:18011");
    node.worker(12, model, "http://127.0.0.1:18012");
    String body = chat(model, "hello there, tell me about the sea");
    EnvoyStream s = node.stream();
    ProcessingResponse h = route(s, "/v1/chat/completions", body, Map.of(), null);
    assertTrue(h.hasRequestHeaders(), h.toString());
    String dest = setHeader(h, "x-gateway-destination-endpoint");
    String[] parts = dest.split(",");
    assertEquals(2, parts.length, "the pick and one fallback: " + dest);
    assertEquals(Set.of("127.0.0.1:18011", "127.0.0.1:18012"), Set.of(parts));
    assertEquals(
        Integer.toString(body.getBytes(java.nio.charset.StandardCharsets.UTF_8).length),
        setHeader(h, "content-length"));
    assertTrue(h.getRequestHeaders().getResponse().getClearRouteCache());
    assertEquals(
        dest,
        h.getDynamicMetadata()
            .getFieldsOrThrow("envoy.lb")
            .getStructValue()
            .getFieldsOrThrow("x-gateway-destination-endpoint")
            .getStringValue());
    long picked = parts[0].endsWith("18011") ? 11 : 12;
    assertEquals(1, node.active(model, picked), "booked while the stream is open");
    assertTrue(node.load(model, picked).get("potential_prefill_tokens").asLong() > 0);

    s.responseHeaders(200);
    assertTrue(s.next().hasResponseHeaders());
    String first = "data: {\"choices\":[{\"delta\":{\"content\":\"Waves\"}}]}\n\n";
    s.responseBody(first, false);
    ProcessingResponse echoed = s.next();
    assertEquals(
        first,
        echoed
            .getResponseBody()
            .getResponse()
            .getBodyMutation()
            .getStreamedResponse()
            .getBody()
            .toStringUtf8(),
        "the response body is streamed back unchanged");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> node.load(model, picked).get("potential_prefill_tokens").asLong() == 0);
    assertEquals(1, node.active(model, picked), "prefill done, still decoding");
    s.responseBody(
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"prompt_tokens_details\":"
            + "{\"cached_tokens\":0}}}\n\ndata: [DONE]\n\n",
        true);
    assertTrue(
        s.next()
            .getResponseBody()
            .getResponse()
            .getBodyMutation()
            .getStreamedResponse()
            .getEndOfStream());
    await().atMost(Duration.ofSeconds(10)).until(() -> node.active(model, picked) == 0);
    s.responseTrailers();
    assertTrue(s.next().hasResponseTrailers());
    s.complete();
    await().atMost(Duration.ofSeconds(10)).until(() -> s.completed);
    String metrics = node.http("GET", "/metrics", null).body();
    assertTrue(
        metrics.contains("kvselect_epp_decisions_total{status=\"200\"}"), "decisions on /metrics");
    assertTrue(
        metrics.contains("kvselect_epp_cached_tokens_matches_total")
            || metrics.contains("kvselect_epp_cached_tokens_mispredictions_total"),
        "cache reuse compared");
  }

  @Test
  void theSubsetHintConfinesThePick() throws Exception {
    String model = "m-subset";
    node.worker(21, model, "http://127.0.0.1:18021");
    node.worker(22, model, "http://127.0.0.2:18022");
    node.worker(23, model, "http://127.0.0.3:18023");
    for (int i = 0; i < 4; i++) {
      EnvoyStream s = node.stream();
      ProcessingResponse h =
          route(
              s,
              "/v1/chat/completions",
              chat(model, "question " + i),
              Map.of(),
              list("127.0.0.2:18022"));
      assertEquals(
          "127.0.0.2:18022",
          setHeader(h, "x-gateway-destination-endpoint"),
          "list form, only one inside");
      s.cancel();
    }
    EnvoyStream s = node.stream();
    ProcessingResponse h =
        route(
            s,
            "/v1/chat/completions",
            chat(model, "comma form"),
            Map.of(),
            string("10.9.9.9:80, 127.0.0.3:18023"));
    assertEquals(
        "127.0.0.3:18023", setHeader(h, "x-gateway-destination-endpoint"), "comma-joined form");
    s.cancel();
    s = node.stream();
    h = route(s, "/v1/chat/completions", chat(model, "ip only"), Map.of(), list("127.0.0.1"));
    assertEquals(
        "127.0.0.1:18021",
        setHeader(h, "x-gateway-destination-endpoint"),
        "an IP alone means any port");
    s.cancel();
    s = node.stream();
    h = route(s, "/v1/chat/completions", chat(model, "nowhere"), Map.of(), list("10.0.0.1:8000"));
    assertImmediate(h, 503, "subset");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> node.active(model, 21) + node.active(model, 22) + node.active(model, 23) == 0);
  }

  @Test
  void theClientGoingAwayFreesTheBooking() throws Exception {
    String model = "m-cancel";
    node.worker(31, model, "http://127.0.0.1:18031");
    EnvoyStream s = node.stream();
    route(
        s,
        "/v1/chat/completions",
        chat(model, "a question that will be abandoned"),
        Map.of(),
        null);
    assertEquals(1, node.active(model, 31));
    s.cancel();
    await().atMost(Duration.ofSeconds(10)).until(() -> node.active(model, 31) == 0);
  }

  @Test
  void anErrorStatusFromTheEngineFreesTheBooking() throws Exception {
    String model = "m-error";
    node.worker(41, model, "http://127.0.0.1:18041");
    EnvoyStream s = node.stream();
    route(
        s,
        "/v1/completions",
        "{\"model\":\"" + model + "\",\"prompt\":\"once upon a time\"}",
        Map.of(),
        null);
    assertEquals(1, node.active(model, 41));
    s.responseHeaders(503);
    assertTrue(s.next().hasResponseHeaders());
    await().atMost(Duration.ofSeconds(10)).until(() -> node.active(model, 41) == 0);
  }

  @Test
  void aConversationsSecondTurnLandsOnTheWorkerHoldingItsPrefix() throws Exception {
    String model = "m-prefix";
    node.worker(51, model, "http://127.0.0.1:18051");
    node.worker(52, model, "http://127.0.0.1:18052");
    for (int c = 0; c < 4; c++) {
      String opening =
          "conversation " + c + " opens with a long shared system-like preamble about tides";
      EnvoyStream one = node.stream();
      String first =
          setHeader(
                  route(one, "/v1/chat/completions", chat(model, opening), Map.of(), null),
                  "x-gateway-destination-endpoint")
              .split(",")[0];
      one.responseHeaders(200).responseBody("{\"choices\":[]}", true);
      one.complete();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> node.active(model, 51) + node.active(model, 52) == 0);
      EnvoyStream two = node.stream();
      String second =
          setHeader(
                  route(
                      two,
                      "/v1/chat/completions",
                      chat(model, opening, "the tide comes in twice a day", "and why is that?"),
                      Map.of(),
                      null),
                  "x-gateway-destination-endpoint")
              .split(",")[0];
      assertEquals(first, second, "conversation " + c + ": turn 2 goes where turn 1's prefix is");
      two.cancel();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> node.active(model, 51) + node.active(model, 52) == 0);
    }
  }

  @Test
  void anthropicMessagesAndTokenPromptsAreRouted() throws Exception {
    String model = "m-apis";
    node.worker(61, model, "http://127.0.0.1:18061");
    EnvoyStream s = node.stream();
    ProcessingResponse h =
        route(
            s,
            "/v1/messages",
            "{\"model\":\""
                + model
                + "\",\"max_tokens\":16,"
                + "\"system\":\"be brief\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\","
                + "\"text\":\"hi\"}]}]}",
            Map.of(),
            null);
    assertEquals("127.0.0.1:18061", setHeader(h, "x-gateway-destination-endpoint"));
    s.cancel();
    int before = render.calls.get();
    s = node.stream();
    h =
        route(
            s,
            "/v1/completions",
            "{\"model\":\"" + model + "\",\"prompt\":[1,2,3,4,5,6,7,8,9]}",
            Map.of(),
            null);
    assertEquals("127.0.0.1:18061", setHeader(h, "x-gateway-destination-endpoint"));
    assertEquals(before, render.calls.get(), "a prompt of token ids needs no render");
    s.cancel();
    await().atMost(Duration.ofSeconds(10)).until(() -> node.active(model, 61) == 0);
  }

  @Test
  void badRequestsGetAJsonErrorAndBookNothing() throws Exception {
    String model = "m-bad";
    node.worker(71, model, "http://127.0.0.1:18071");
    assertImmediate(
        route(
            node.stream(), "/v1/chat/completions", "{\"model\":\"" + model + "\",", Map.of(), null),
        400,
        "JSON");
    assertImmediate(
        route(
            node.stream(),
            "/v1/chat/completions",
            "{\"model\":\"" + model + "\",\"messages\":[]}",
            Map.of(),
            null),
        400,
        "messages");
    assertImmediate(
        route(
            node.stream(),
            "/v1/chat/completions",
            "{\"messages\":[{\"role\":\"user\"}]}",
            Map.of(),
            null),
        400,
        "model");
    assertImmediate(
        route(node.stream(), "/v1/embeddings", "{\"model\":\"" + model + "\"}", Map.of(), null),
        404,
        "inference route");
    assertImmediate(
        route(node.stream(), "/v1/chat/completions", chat("no-such-model", "hi"), Map.of(), null),
        503,
        "no worker");
    EnvoyStream s = node.stream();
    s.headers("/v1/chat/completions", Map.of(), null, true);
    assertImmediate(s.next(), 400, "body");
    assertEquals(0, node.active(model, 71));
  }

  @Test
  void renderFailuresMapAsThePeersMapThem() throws Exception {
    String[] models = {"render-500", "render-400", "render-slow"};
    for (int i = 0; i < models.length; i++) {
      node.worker(81 + i, models[i], "http://127.0.0.1:18081");
    }
    assertImmediate(
        route(node.stream(), "/v1/chat/completions", chat("render-500", "x"), Map.of(), null),
        502,
        "answered 500");
    assertImmediate(
        route(node.stream(), "/v1/chat/completions", chat("render-400", "x"), Map.of(), null),
        400,
        "prompt too long");
    assertImmediate(
        route(node.stream(), "/v1/chat/completions", chat("render-slow", "x"), Map.of(), null),
        504,
        "in time");
  }

  @Test
  void aGatewayRetryElsewhereMovesTheBookingToTheEndpointThatServed() throws Exception {
    String model = "m-served";
    node.worker(91, model, "http://127.0.0.1:18091");
    node.worker(92, model, "http://127.0.0.1:18092");
    EnvoyStream s = node.stream();
    String[] dests =
        setHeader(
                route(
                    s,
                    "/v1/chat/completions",
                    chat(model, "retry me elsewhere please"),
                    Map.of(),
                    null),
                "x-gateway-destination-endpoint")
            .split(",");
    long picked = dests[0].endsWith("18091") ? 91 : 92;
    long other = picked == 91 ? 92 : 91;
    assertEquals(1, node.active(model, picked));
    s.responseHeaders(200, dests[1]);
    assertTrue(s.next().hasResponseHeaders());
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> node.active(model, other) == 1 && node.active(model, picked) == 0);
    s.responseBody("{\"choices\":[]}", true);
    s.next();
    await().atMost(Duration.ofSeconds(10)).until(() -> node.active(model, other) == 0);
  }

  @Test
  void theConformanceHooksPickTheNamedEndpointAndEchoTheServedOne() throws Exception {
    String model = "m-conformance";
    node.worker(95, model, "http://127.0.0.1:18095");
    EnvoyStream s = node.stream();
    ProcessingResponse h =
        route(
            s,
            "/v1/chat/completions",
            chat(model, "hi"),
            Map.of("test-epp-endpoint-selection", "10.1.2.3:8000,10.1.2.4:8000"),
            list("10.1.2.4:8000"));
    assertEquals("10.1.2.4:8000", setHeader(h, "x-gateway-destination-endpoint"));
    assertEquals(0, node.active(model, 95), "a forced pick books nothing");
    s.responseHeaders(200, "10.1.2.4:8000");
    ProcessingResponse ack = s.next();
    assertEquals(
        "10.1.2.4:8000",
        ack.getResponseHeaders()
            .getResponse()
            .getHeaderMutation()
            .getSetHeaders(0)
            .getHeader()
            .getRawValue()
            .toStringUtf8());
    assertEquals(
        "x-conformance-test-served-endpoint",
        ack.getResponseHeaders()
            .getResponse()
            .getHeaderMutation()
            .getSetHeaders(0)
            .getHeader()
            .getKey());
    s.cancel();
  }

  @Test
  void requestTrailersEndTheBodyAndAreAcknowledged() throws Exception {
    String model = "m-trailers";
    node.worker(97, model, "http://127.0.0.1:18097");
    String body = chat(model, "a body that ends with trailers");
    EnvoyStream s = node.stream();
    s.headers("/v1/chat/completions", Map.of(), null, false).body(body, false).requestTrailers();
    java.util.List<ProcessingResponse> got = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      got.add(s.next());
    }
    assertTrue(
        got.get(0).hasRequestHeaders()
            && got.get(1).hasRequestBody()
            && got.get(2).hasRequestTrailers(),
        "headers, body, then the trailers acknowledged, in Envoy's phase order: " + got);
    assertEquals("127.0.0.1:18097", setHeader(got.get(0), "x-gateway-destination-endpoint"));
    assertEquals(1, node.active(model, 97));
    s.cancel();
    await().atMost(Duration.ofSeconds(10)).until(() -> node.active(model, 97) == 0);
  }

  @Test
  void grpcHealthReportsLivenessAndReadiness() {
    var health =
        HealthGrpc.newBlockingStub(node.channel)
            .withDeadlineAfter(5, java.util.concurrent.TimeUnit.SECONDS);
    for (String service :
        new String[] {"liveness", "readiness", "envoy.service.ext_proc.v3.ExternalProcessor"}) {
      assertEquals(
          ServingStatus.SERVING,
          health.check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus(),
          service);
    }
  }

  static void assertImmediate(ProcessingResponse r, int status, String messagePart)
      throws Exception {
    assertTrue(r.hasImmediateResponse(), "an immediate response: " + r);
    assertEquals(status, r.getImmediateResponse().getStatus().getCodeValue(), r.toString());
    JsonNode body = EppNode.JSON.readTree(r.getImmediateResponse().getBody().toByteArray());
    assertTrue(body.get("error").asText().contains(messagePart), body.toString());
    assertEquals(status, body.get("code").asInt());
    assertTrue(
        r.getImmediateResponse().getHeaders().getSetHeadersList().stream()
            .anyMatch(o -> o.getHeader().getKey().equals("content-type")));
  }
}
