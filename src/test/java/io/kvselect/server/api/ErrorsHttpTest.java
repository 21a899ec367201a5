package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every error status of the contract, with Dynamo's {@code {"error": ...}} envelope. */
class ErrorsHttpTest {

  private static NodeHarness n;

  @BeforeAll
  static void start() throws Exception {
    n = NodeHarness.approximate();
    n.worker(1);
  }

  @AfterAll
  static void stop() throws Exception {
    n.close();
  }

  private static void assertError(NodeHarness.Reply r, int status, String fragment) {
    assertEquals(status, r.status(), r.raw());
    assertTrue(
        r.error() != null && r.error().contains(fragment),
        "error should mention '" + fragment + "': " + r.raw());
  }

  /** The raw answer to {@code request} written on a fresh loopback connection (read to its close). */
  private static String raw(String request) throws Exception {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", n.node.port())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      return new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  @Test
  void http11RequestWithoutHostIs400NamingTheHeader() throws Exception {
    String body = "{\"token_ids\":[1,2,3,4]}";
    for (String request :
        new String[] {
          "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n",
          "POST /select HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: "
              + body.length()
              + "\r\n\r\n"
              + body
        }) {
      String answer = raw(request);
      assertTrue(answer.startsWith("HTTP/1.1 400 "), answer);
      assertTrue(
          answer.endsWith("{\"error\":\"the Host header is required for HTTP/1.1 requests\"}"),
          answer);
    }
    assertTrue(
        raw("GET /health HTTP/1.0\r\n\r\n").startsWith("HTTP/1.0 200 "), "HTTP/1.0 needs no Host");
  }

  @Test
  void syntaxErrorIs400() throws Exception {
    assertError(n.post("/select", "{\"token_ids\": [1,2,"), 400, "parse");
    assertError(n.post("/select", ""), 400, "parse");
    assertError(n.post("/workers", "{} trailing"), 400, "parse");
  }

  @Test
  void missingContentTypeIs415() throws Exception {
    assertError(n.call("POST", "/select", "{\"token_ids\":[1,2,3,4]}", null), 415, "Content-Type");
    assertError(n.call("POST", "/workers", "{\"worker_id\":1}", "text/plain"), 415, "Content-Type");
    assertEquals(
        200,
        n.call("POST", "/select", "{\"token_ids\":[1,2,3,4]}", "application/json; charset=utf-8")
            .status());
  }

  @Test
  void missingOrMistypedFieldIs422NamingIt() throws Exception {
    assertError(n.post("/reservations", "{\"model_name\":\"default\"}"), 422, "selection_id");
    assertError(n.post("/workers", "{\"endpoint\":\"x\"}"), 422, "worker_id");
    assertError(n.post("/select", "{\"token_ids\":\"1,2,3\"}"), 422, "token_ids");
    assertError(n.post("/select", "{\"token_ids\":[1,-2,3]}"), 422, "token_ids");
    assertError(n.post("/select", "{\"token_ids\":[4294967296]}"), 422, "token_ids");
    assertError(
        n.post("/select", "{\"block_hashes\":[1.5],\"sequence_hashes\":[1],\"isl_tokens\":4}"),
        422,
        "block_hashes");
    assertError(n.post("/workers", "{\"worker_id\":-1}"), 422, "worker_id");
    assertError(n.post("/workers", "{\"worker_id\":2,\"block_size\":\"16\"}"), 422, "block_size");
    assertError(
        n.post("/workers", "{\"worker_id\":2,\"kv_events_endpoints\":{\"zero\":\"tcp://x:1\"}}"),
        422,
        "kv_events_endpoints");
    assertError(
        n.post(
            "/select",
            "{\"token_ids\":[1,2,3,4],\"session_context\":{\"parent_session_id\":\"p\"}}"),
        422,
        "session_context.session_id");
    assertError(
        n.post("/select", "{\"token_ids\":[1,2,3,4],\"pinned_worker\":{\"worker_id\":1}}"),
        422,
        "pinned_worker.dp_rank");
    assertError(n.post("/select", "[1,2,3]"), 422, "object");
    assertError(
        n.post(
            "/select",
            "{\"block_hashes\":[1],\"sequence_hashes\":[1],\"isl_tokens\":9223372036854775807}"),
        422,
        "isl_tokens");
  }

  @Test
  void arraysAreBounded() throws Exception {
    StringBuilder b = new StringBuilder("{\"token_ids\":[");
    for (int i = 0; i <= JsonReader.MAX_ARRAY; i++) {
      b.append(i == 0 ? "1" : ",1");
    }
    b.append("]}");
    assertError(n.post("/select", b.toString()), 422, "more than 1000000");
  }

  @Test
  void bodyOverEightMebibytesIs413() throws Exception {
    String big = "{\"token_ids\":[" + "1,".repeat(4_300_000) + "1]}";
    NodeHarness.Reply r = n.post("/select", big);
    assertEquals(413, r.status(), r.raw().length() > 200 ? r.raw().substring(0, 200) : r.raw());
  }

  @Test
  void unknownRouteWorkerAndReservationAre404() throws Exception {
    assertError(n.get("/nope"), 404, "route not found");
    assertError(n.delete("/workers/77"), 404, "worker 77 not found");
    assertError(n.post("/reservations/zzz/prefill_complete", ""), 404, "reservation zzz not found");
    assertError(n.delete("/reservations/zzz"), 404, "not found");
    assertError(n.post("/reservations", "{\"selection_id\":\"zzz\"}"), 404, "no pending selection");
  }

  @Test
  void wrongMethodIs405() throws Exception {
    assertError(n.get("/select"), 405, "method not allowed");
    assertError(n.delete("/health"), 405, "method not allowed");
  }

  @Test
  void badWorkerIdInPathIs400() throws Exception {
    assertError(n.delete("/workers/abc"), 400, "worker id");
  }

  @Test
  void notReadyPartitionIs503() throws Exception {
    assertError(
        n.post("/select", "{\"model_name\":\"absent\",\"token_ids\":[1,2,3,4]}"),
        503,
        "no schedulable workers");
  }

  /**
   * As Dynamo without {@code --replica-sync-port}: the peer list is an empty JSON array (200), and
   * adding or removing a peer is a 409 naming replica sync (a body without {@code endpoint} is a
   * 422 first). The README's route table says the same.
   */
  @Test
  void replicaSyncListsNoPeersAndRefusesPeerChanges() throws Exception {
    assertError(n.post("/replica_sync/register_peer", "{}"), 422, "endpoint");
    NodeHarness.Reply peers = n.get("/replica_sync/peers");
    assertEquals(200, peers.status());
    assertEquals("[]", peers.raw().strip());
    String peer = "{\"endpoint\":\"tcp://127.0.0.1:9\"}";
    assertError(n.post("/replica_sync/register_peer", peer), 409, "replica sync");
    assertError(n.post("/replica_sync/deregister_peer", peer), 409, "replica sync");
  }

  @Test
  void metricsAreExposedInPrometheusFormat() throws Exception {
    n.post("/select", "{\"token_ids\":[1,2,3,4]}");
    NodeHarness.Reply r = n.get("/metrics");
    assertEquals(200, r.status());
    assertTrue(r.raw().contains("kvselect_selections_total"), "selections counter");
    assertTrue(r.raw().contains("kvselect_http_request_seconds_bucket"), "latency histogram");
    assertTrue(r.raw().contains("kvselect_index_blocks"), "index size gauge");
  }
}
