package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Request bodies that once reached a 500: a JSON {@code null} (or another wrong element) inside a
 * typed array or map, and form-encoded bodies on JSON routes, which the body handler decoded
 * before any content-type check. Each answers a 4xx with the error envelope naming the field.
 */
class BadBodiesHttpTest {

  private static NodeHarness n;

  @BeforeAll
  static void start() throws Exception {
    n = NodeHarness.approximate();
    assertEquals(201, n.worker(1).status());
  }

  @AfterAll
  static void stop() throws Exception {
    n.close();
  }

  private static final String PROMPT = "\"token_ids\":[1,2,3,4,5,6,7,8]";

  static Stream<Arguments> badElements() {
    return Stream.of(
        Arguments.of(
            "/select",
            "{" + PROMPT + ",\"allowed_worker_ids\":[1,7,null]}",
            "allowed_worker_ids[2]"),
        Arguments.of(
            "/select", "{" + PROMPT + ",\"allowed_worker_ids\":[null]}", "allowed_worker_ids[0]"),
        Arguments.of(
            "/select", "{" + PROMPT + ",\"allowed_worker_ids\":[1,[2]]}", "allowed_worker_ids[1]"),
        Arguments.of(
            "/select", "{" + PROMPT + ",\"allowed_worker_ids\":[1,2.5]}", "allowed_worker_ids[1]"),
        Arguments.of(
            "/select", "{" + PROMPT + ",\"allowed_worker_ids\":[\"1\"]}", "allowed_worker_ids[0]"),
        Arguments.of(
            "/select", "{" + PROMPT + ",\"allowed_worker_ids\":[-1]}", "allowed_worker_ids[0]"),
        Arguments.of(
            "/select",
            "{" + PROMPT + ",\"allowed_worker_ids\":[18446744073709551616]}",
            "allowed_worker_ids[0]"),
        Arguments.of("/overlap_scores", "{\"token_ids\":[1,null,3]}", "token_ids[1]"),
        Arguments.of("/overlap_scores", "{\"token_ids\":[1,2,3.0]}", "token_ids[2]"),
        Arguments.of(
            "/potential_loads",
            "{\"block_hashes\":[1,null],\"sequence_hashes\":[1,2],\"isl_tokens\":8}",
            "block_hashes[1]"),
        Arguments.of(
            "/potential_loads",
            "{\"block_hashes\":[1,2],\"sequence_hashes\":[[1],2],\"isl_tokens\":8}",
            "sequence_hashes[0]"),
        Arguments.of(
            "/select",
            "{"
                + PROMPT
                + ",\"mm_routing_info\":{\"block_mm_infos\":[{\"mm_objects\":"
                + "[{\"mm_hash\":null}]}]}}",
            "mm_routing_info.block_mm_infos[0].mm_objects[0].mm_hash"),
        Arguments.of(
            "/select",
            "{" + PROMPT + ",\"block_mm_infos\":[{\"mm_objects\":[{\"mm_hash\":1},7]}]}",
            "block_mm_infos[0].mm_objects[1]"),
        Arguments.of(
            "/select",
            "{"
                + PROMPT
                + ",\"session_context\":{\"session_id\":\"s\",\"agent_headers\":"
                + "{\"x-trace\":null}}}",
            "session_context.agent_headers.x-trace"),
        Arguments.of(
            "/select",
            "{"
                + PROMPT
                + ",\"session_context\":{\"session_id\":\"s\",\"agent_headers\":"
                + "{\"x-trace\":[\"a\",null]}}}",
            "session_context.agent_headers.x-trace[1]"),
        Arguments.of(
            "/select",
            "{" + PROMPT + ",\"routing_constraints\":{\"required_taints\":[\"a\",null]}}",
            "routing_constraints.required_taints[1]"),
        Arguments.of(
            "/select",
            "{" + PROMPT + ",\"routing_constraints\":{\"preferred_taints\":{\"a\":\"x\"}}}",
            "routing_constraints.preferred_taints.a"),
        Arguments.of("/workers", "{\"worker_id\":3,\"taints\":[\"a\",null]}", "taints"),
        Arguments.of(
            "/workers",
            "{\"worker_id\":3,\"kv_events_endpoints\":{\"0\":null}}",
            "kv_events_endpoints.0"));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("badElements")
  void wrongElementInsideATypedArrayIs422NamingTheElement(String path, String body, String field)
      throws Exception {
    String workersBefore = n.get("/workers").raw();
    NodeHarness.Reply r = n.post(path, body);
    assertEquals(422, r.status(), r.raw());
    assertTrue(
        r.error() != null && r.error().contains(field), "should name " + field + ": " + r.raw());
    assertEquals(workersBefore, n.get("/workers").raw(), "a rejected request changes nothing");
  }

  static Stream<Arguments> loneSurrogates() {
    return Stream.of(
        Arguments.of(
            "/workers",
            "{\"worker_id\":4,\"model_name\":\"m\\ud800\",\"endpoint\":\"http://w\",\"block_size\":4}",
            "model_name"),
        Arguments.of("/workers", "{\"worker_id\":4,\"taints\":[\"\\udc00\"]}", "taints[0]"),
        Arguments.of(
            "/workers",
            "{\"worker_id\":4,\"topology_domains\":{\"zone\":\"\\ud83d\"}}",
            "topology_domains.zone"),
        Arguments.of("/select", "{" + PROMPT + ",\"session_id\":\"\\ud800x\"}", "session_id"),
        Arguments.of("/select", "{" + PROMPT + ",\"selection_id\":\"\\udfff\"}", "selection_id"),
        Arguments.of("/select", "{" + PROMPT + ",\"\\ud800\":1}", "a field name"),
        Arguments.of("/reservations", "{\"selection_id\":\"\\ud800\"}", "selection_id"));
  }

  /**
   * A string with a lone surrogate escape is not Unicode: it is refused before anything is stored,
   * so that no answer (the error included) ever has to write it back.
   */
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("loneSurrogates")
  void loneSurrogateIs400NamingTheField(String path, String body, String field) throws Exception {
    String workersBefore = n.get("/workers").raw();
    NodeHarness.Reply r = n.post(path, body);
    assertEquals(400, r.status(), r.raw());
    assertTrue(
        r.error() != null && r.error().contains(field) && r.error().contains("surrogate"), r.raw());
    NodeHarness.Reply after = n.get("/workers");
    assertEquals(200, after.status(), after.raw());
    assertEquals(workersBefore, after.raw(), "a rejected request changes nothing");
  }

  static Stream<Arguments> formBodies() {
    String big = "x".repeat(64 * 1024);
    String boundary = "kvselectBoundary";
    String multipart =
        "--"
            + boundary
            + "\r\nContent-Disposition: form-data; name=\"token_ids\"\r\n\r\n"
            + big
            + "\r\n--"
            + boundary
            + "--\r\n";
    Stream.Builder<Arguments> out = Stream.builder();
    for (String path :
        new String[] {
          "/select",
          "/select_and_reserve",
          "/workers",
          "/reservations",
          "/potential_loads",
          "/overlap_scores",
          "/reservations/r/output_block",
          "/replica_sync/register_peer"
        }) {
      out.add(Arguments.of("POST", path, "application/x-www-form-urlencoded", "token_ids=" + big));
      out.add(Arguments.of("POST", path, "multipart/form-data; boundary=" + boundary, multipart));
    }
    out.add(
        Arguments.of("PATCH", "/workers/1", "application/x-www-form-urlencoded", "taints=" + big));
    out.add(
        Arguments.of(
            "PATCH", "/workers/1", "multipart/form-data; boundary=" + boundary, multipart));
    out.add(Arguments.of("POST", "/select", "text/plain", "{" + PROMPT + "}"));
    out.add(
        Arguments.of(
            "POST", "/select", "application/x-www-form-urlencoded", "a=" + "x".repeat(6 << 20)));
    return out.build();
  }

  @ParameterizedTest(name = "{0} {1} as {2}")
  @MethodSource("formBodies")
  void nonJsonBodyIs415BeforeAnyDecoding(
      String method, String path, String contentType, String body) throws Exception {
    NodeHarness.Reply r = n.call(method, path, body, contentType);
    assertEquals(415, r.status(), r.raw().length() > 300 ? r.raw().substring(0, 300) : r.raw());
    assertTrue(r.error() != null && r.error().contains("Content-Type: application/json"), r.raw());
  }

  static Stream<Arguments> bodilessFormRequests() {
    Stream.Builder<Arguments> out = Stream.builder();
    for (String ct :
        new String[] {
          "multipart/form-data",
          "multipart/form-data; boundary=",
          "Multipart/Form-Data",
          "multipart/form-data; boundary=x; charset=bogus",
          "application/x-www-form-urlencoded; charset=bogus"
        }) {
      out.add(Arguments.of("GET", "/health", ct, 200));
      out.add(Arguments.of("GET", "/workers", ct, 200));
      out.add(Arguments.of("DELETE", "/reservations/none", ct, 404));
      out.add(Arguments.of("POST", "/reservations/none/prefill_complete", ct, 404));
      out.add(Arguments.of("POST", "/reservations/none/output_block", ct, 404));
    }
    return out.build();
  }

  /**
   * A form content type on a request without a body (which some clients send by default) must not
   * start Vert.x's form decoder, which fails on a missing boundary or an unknown charset.
   */
  @ParameterizedTest(name = "{0} {1} as {2}")
  @MethodSource("bodilessFormRequests")
  void bodilessRequestWithAFormContentTypeIsNotDecoded(
      String method, String path, String contentType, int status) throws Exception {
    NodeHarness.Reply r = n.call(method, path, "", contentType);
    assertEquals(status, r.status(), r.raw());
  }

  @Test
  void bodilessRequestsNeedNoContentType() throws Exception {
    assertEquals(
        200, n.post("/select_and_reserve", "{\"selection_id\":\"b-1\"," + PROMPT + "}").status());
    assertEquals(200, n.call("POST", "/reservations/b-1/prefill_complete", null, null).status());
    assertEquals(
        200,
        n.call(
                "POST",
                "/reservations/b-1/prefill_complete",
                "",
                "application/x-www-form-urlencoded")
            .status(),
        "curl -d '' sends an empty form");
    assertEquals(200, n.call("POST", "/reservations/b-1/output_block", null, null).status());
    assertEquals(200, n.call("DELETE", "/reservations/b-1", null, null).status());
  }
}
