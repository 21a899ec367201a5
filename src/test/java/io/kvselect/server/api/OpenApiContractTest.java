package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.metrics.ServiceMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /openapi.json} against the node: the document is served, names OpenAPI 3.1 and
 * documents exactly the routes registered on the HTTP verticle's router; every documented
 * operation answers (neither "route not found" nor 405); and {@link #everyRouteValidAndInvalid}
 * drives every route with valid and invalid requests and validates each response against the
 * schema documented for its status.
 */
class OpenApiContractTest {

  private static OpenApiDoc doc;
  private static NodeHarness node;
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void start() throws Exception {
    doc = new OpenApiDoc();
    node = new NodeHarness(Map.of());
  }

  @AfterAll
  static void stop() throws Exception {
    node.close();
  }

  /** A response with the header the contract check needs. */
  record Answer(int status, String contentType, String body) {
    JsonNode json() throws Exception {
      return NodeHarness.JSON.readTree(body);
    }
  }

  static Answer send(String method, String path, String body, String contentType) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.node.port() + path))
            .timeout(Duration.ofSeconds(20));
    if (contentType != null) {
      b.header("content-type", contentType);
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Answer(
        r.statusCode(), r.headers().firstValue("content-type").orElse(null), r.body());
  }

  @Test
  void clusteredNodesAnswerClusterAndReadyAsDocumented() throws Exception {
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
    int base = io.kvselect.testing.Ports.freeRange(2);
    String name = "kvs-test-" + java.util.UUID.randomUUID();
    String members = "127.0.0.1:" + base + ",127.0.0.1:" + (base + 1);
    java.util.List<io.kvselect.server.KvselectNode> nodes = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        io.kvselect.server.config.NodeSettings s =
            io.kvselect.server.config.NodeSettings.parse(
                new String[] {
                  "--host",
                  "127.0.0.1",
                  "--port",
                  "0",
                  "--cluster",
                  "--cluster-name",
                  name,
                  "--cluster-members",
                  members,
                  "--cluster-port",
                  Integer.toString(base)
                },
                java.util.Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
        nodes.add(
            io.kvselect.server.KvselectNode.start(s)
                .toCompletionStage()
                .toCompletableFuture()
                .get(90, java.util.concurrent.TimeUnit.SECONDS));
      }
      for (io.kvselect.server.KvselectNode n : nodes) {
        for (String path : java.util.List.of("/cluster", "/ready")) {
          HttpResponse<String> r =
              CLIENT.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.port() + path))
                      .timeout(Duration.ofSeconds(20))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
          doc.check(
              "GET",
              path,
              r.statusCode(),
              r.headers().firstValue("content-type").orElse(null),
              r.body());
          if (path.equals("/cluster")) {
            JsonNode c = NodeHarness.JSON.readTree(r.body());
            assertEquals("joined", c.get("state").asText(), r.body());
            assertTrue(c.has("sync"), "a joined node reports its sync: " + r.body());
          }
        }
      }
    } finally {
      for (io.kvselect.server.KvselectNode n : nodes) {
        n.close()
            .toCompletionStage()
            .toCompletableFuture()
            .get(60, java.util.concurrent.TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void documentIsServedAsOpenApi31() throws Exception {
    Answer a = send("GET", "/openapi.json", null, null);
    assertEquals(200, a.status());
    assertTrue(a.contentType().startsWith("application/json"));
    JsonNode served = a.json();
    assertEquals(doc.doc, served, "the served document is the resource");
    assertTrue(served.get("openapi").asText().startsWith("3.1."), served.get("openapi").asText());
    assertTrue(served.at("/components/schemas/Error/required").toString().contains("error"));
  }

  /** The router of a started HTTP verticle against the document, both ways. */
  @Test
  void everyRegisteredRouteIsDocumentedAndEveryDocumentedOperationIsRegistered() throws Exception {
    Vertx vertx = Vertx.vertx();
    SelectionService service = SelectionService.builder().build();
    try {
      HttpApiVerticle api =
          new HttpApiVerticle(
              service,
              new ServiceMetrics(),
              null,
              () -> null,
              "127.0.0.1",
              0,
              port -> {},
              Map.of(),
              io.kvselect.server.security.HttpGuards.NONE,
              io.kvselect.server.cluster.ClusterView.standalone());
      vertx.deployVerticle(api).toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
      Set<String> registered = new TreeSet<>();
      for (Route r : api.router().getRoutes()) {
        if (r.getPath() == null) {
          continue; // handlers for every request (timing, body, failure)
        }
        assertFalse(
            r.methods() == null || r.methods().isEmpty(),
            "route " + r.getPath() + " without a method");
        String path = r.getPath().replaceAll(":([A-Za-z0-9_]+)", "{$1}");
        for (HttpMethod m : r.methods()) {
          registered.add(m.name().toUpperCase(Locale.ROOT) + " " + path);
        }
      }
      assertTrue(registered.size() > 20, registered.toString());
      assertEquals(
          registered,
          doc.operations(),
          "routes registered on the router (left) and operations in openapi.json (right) differ");
    } finally {
      service.shutdown();
      vertx.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  /** Each documented operation reaches a handler: no "route not found", no 405. */
  @Test
  void everyDocumentedOperationAnswers() throws Exception {
    for (String op : doc.operations()) {
      String method = op.substring(0, op.indexOf(' '));
      String path = op.substring(op.indexOf(' ') + 1).replace("{id}", "424242");
      boolean hasBody =
          doc.doc
              .get("paths")
              .get(op.substring(op.indexOf(' ') + 1))
              .get(method.toLowerCase(Locale.ROOT))
              .has("requestBody");
      Answer a = send(method, path, hasBody ? "{}" : null, hasBody ? "application/json" : null);
      assertNotEquals(405, a.status(), op + ": " + a.body());
      assertFalse(a.status() == 404 && a.body().contains("route not found"), op + ": " + a.body());
      doc.check(method, path, a.status(), a.contentType(), a.body());
    }
  }

  /** Each row of the README's route table names documented operations. */
  @Test
  void readmeRoutesAreDocumented() throws Exception {
    String readme = java.nio.file.Files.readString(java.nio.file.Path.of("README.md"));
    String table =
        readme.substring(
            readme.indexOf("## Routes"), readme.indexOf("\n## ", readme.indexOf("## Routes") + 3));
    Set<String> rows = new TreeSet<>();
    java.util.regex.Matcher row =
        java.util.regex.Pattern.compile("(?m)^\\| ([A-Z /]+) \\| (.+?) \\|").matcher(table);
    while (row.find()) {
      java.util.regex.Matcher path =
          java.util.regex.Pattern.compile("`(/[^`?]*)").matcher(row.group(2));
      while (path.find()) {
        for (String m : row.group(1).split("/")) {
          rows.add(m.trim() + " " + path.group(1));
        }
      }
    }
    assertTrue(
        rows.contains("GET /ui") && rows.contains("GET /openapi.json") && rows.size() > 20,
        rows.toString());
    Set<String> undocumented = new TreeSet<>(rows);
    undocumented.removeAll(doc.operations());
    assertEquals(Set.of(), undocumented, "README routes missing from openapi.json");
  }

  /** A router-queue rejection (429) carries the documented details. */
  @Test
  void queueRejectionMatchesItsSchema() throws Exception {
    Map<String, String> env =
        Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "1.0");
    try (NodeHarness queued = new NodeHarness(env, "--router-queue-timeout-secs", "1")) {
      assertEquals(
          201,
          queued
              .post(
                  "/workers",
                  "{\"worker_id\":1,\"endpoint\":\"http://w1\",\"block_size\":4,"
                      + "\"max_num_batched_tokens\":16}")
              .status());
      String tokens =
          java.util.stream.IntStream.range(0, 32)
              .mapToObj(Integer::toString)
              .collect(java.util.stream.Collectors.joining(","));
      for (String path : List.of("/select_and_reserve", "/select")) {
        if (path.equals("/select_and_reserve")) {
          assertEquals(
              200,
              queued
                  .post(path, "{\"selection_id\":\"busy\",\"token_ids\":[" + tokens + "]}")
                  .status());
        }
        HttpRequest req =
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queued.node.port() + path))
                .timeout(Duration.ofSeconds(30))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"token_ids\":[" + tokens + "]}"))
                .build();
        HttpResponse<String> r = CLIENT.send(req, HttpResponse.BodyHandlers.ofString());
        assertEquals(429, r.statusCode(), r.body());
        doc.check("POST", path, 429, r.headers().firstValue("content-type").orElse(null), r.body());
      }
    }
  }

  @Test
  void validatorRejectsAWrongBody() {
    assertEquals(List.of(), doc.violations("Error", "{\"error\":\"x\"}"));
    assertFalse(doc.violations("Error", "{\"message\":\"x\"}").isEmpty(), "error is required");
    assertFalse(
        doc.violations(
                "Worker",
                "{\"worker_id\":1,\"model_name\":\"m\",\"routing_group\":\"g\","
                    + "\"data_parallel_start_rank\":0,\"data_parallel_size\":1,\"is_eagle\":false,\"lifecycle\":\"sleeping\"}")
            .isEmpty(),
        "lifecycle is an enum");
    assertFalse(doc.violations("Worker", "{\"worker_id\":-1}").isEmpty());
    assertFalse(
        doc.violations("QueueRejectionError", "{\"error\":\"busy\"}").isEmpty(),
        "details are required");
  }

  /** One request of the walk: what was sent, what it must answer. */
  record Step(String method, String path, String body, String contentType, int expected) {}

  static Step json(String method, String path, String body, int expected) {
    return new Step(method, path, body, "application/json", expected);
  }

  static Step bare(String method, String path, int expected) {
    return new Step(method, path, null, null, expected);
  }

  /**
   * Every route with valid and invalid requests, in an order that builds the state each needs;
   * every answer must have the expected status and validate against its documented schema, and
   * every documented operation must be exercised.
   */
  @Test
  void everyRouteValidAndInvalid() throws Exception {
    String tokens = "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]";
    String big =
        "{\"worker_id\":1,\"pad\":\"" + "x".repeat((int) HttpApiVerticle.BODY_LIMIT) + "\"}";
    List<Step> steps =
        new ArrayList<>(
            List.of(
                bare("GET", "/health", 200),
                bare("GET", "/cluster", 200),
                bare("GET", "/ready", 503),
                json(
                    "POST",
                    "/workers",
                    "{\"worker_id\":71,\"endpoint\":\"http://w71:8000\",\"block_size\":4,"
                        + "\"kv_events_endpoint\":\"tcp://127.0.0.1:1\",\"max_num_batched_tokens\":4096,\"total_kv_blocks\":100,"
                        + "\"taints\":[\"b\",\"a\"],\"topology_domains\":{\"zone\":\"z1\"}}",
                    201),
                json(
                    "POST",
                    "/workers",
                    "{\"worker_id\":72,\"endpoint\":\"http://w72:8000\",\"block_size\":4,"
                        + "\"data_parallel_size\":2,\"kv_events_endpoints\":{\"0\":\"tcp://127.0.0.1:2\",\"1\":\"tcp://127.0.0.1:3\"}}",
                    201),
                json(
                    "POST",
                    "/workers",
                    "{\"worker_id\":73,\"model_name\":\"other\",\"endpoint\":\"http://w73:8000\"}",
                    201),
                json(
                    "POST",
                    "/workers",
                    "{\"worker_id\":18446744073709551615,\"endpoint\":\"http://max:8000\",\"block_size\":4,"
                        + "\"kv_events_endpoint\":\"tcp://127.0.0.1:4\"}",
                    201),
                json("POST", "/workers", "{\"worker_id\":", 400),
                json("POST", "/workers", "{\"endpoint\":\"http://w\"}", 422),
                json("POST", "/workers", "{\"worker_id\":\"seven\"}", 422),
                json(
                    "POST",
                    "/workers",
                    "{\"worker_id\":74,\"kv_transfer_enforcement\":\"maybe\"}",
                    422),
                new Step("POST", "/workers", "worker_id=1", "text/plain", 415),
                json("POST", "/workers", big, 413),
                bare("GET", "/workers", 200),
                bare("GET", "/workers?model_name=other&routing_group=default", 200),
                json("PATCH", "/workers/71", "{\"max_num_batched_tokens\":8192}", 200),
                json("PATCH", "/workers/999", "{\"block_size\":8}", 404),
                json("PATCH", "/workers/71", "{\"block_size\":\"big\"}", 422),
                json("PATCH", "/workers/71", "[", 422),
                json("PATCH", "/workers/71", "{\"block_size\"", 400),
                bare("GET", "/ready", 200),
                json("POST", "/select", "{\"token_ids\":" + tokens + "}", 200),
                json(
                    "POST",
                    "/select",
                    "{\"token_ids\":" + tokens + ",\"advisory\":true,\"selection_id\":\"s-1\"}",
                    200),
                json(
                    "POST",
                    "/select",
                    "{\"token_ids\":"
                        + tokens
                        + ",\"model_name\":\"default\",\"routing_group\":\"default\","
                        + "\"router_config_override\":{\"router_temperature\":0.0,\"overlap_score_credit\":1.0},"
                        + "\"routing_constraints\":{\"required_taints\":[\"a\"],\"preferred_taints\":{\"b\":1.5}},"
                        + "\"allowed_worker_ids\":[71,72],\"expected_output_tokens\":16,\"priority_jump\":0.5,"
                        + "\"session_context\":{\"session_id\":\"sess-1\",\"input_trigger\":\"user_message\"}}",
                    200),
                json("POST", "/select", "{\"token_ids\":[-1]}", 422),
                json("POST", "/select", "{}", 400),
                json(
                    "POST",
                    "/select",
                    "{\"model_name\":\"nobody\",\"token_ids\":" + tokens + "}",
                    503),
                json("POST", "/reservations", "{\"selection_id\":\"s-1\"}", 201),
                json("POST", "/reservations", "{\"selection_id\":\"s-1\"}", 404),
                json(
                    "POST",
                    "/reservations",
                    "{\"selection_id\":\"s-2\",\"worker_id\":72,\"dp_rank\":1,"
                        + "\"sequence_hashes\":[1,2],\"isl_tokens\":8}",
                    201),
                json("POST", "/reservations", "{\"worker_id\":72}", 422),
                json(
                    "POST",
                    "/select_and_reserve",
                    "{\"selection_id\":\"r-1\",\"token_ids\":" + tokens + "}",
                    200),
                json(
                    "POST",
                    "/select_and_reserve",
                    "{\"selection_id\":\"r-1\",\"token_ids\":" + tokens + "}",
                    409),
                json(
                    "POST",
                    "/select_and_reserve",
                    "{\"token_ids\":"
                        + tokens
                        + ",\"pinned_worker\":{\"worker_id\":5,\"dp_rank\":0}}",
                    404),
                json(
                    "POST",
                    "/select_and_reserve",
                    "{\"token_ids\":" + tokens + ",\"pinned_worker\":{\"worker_id\":5}}",
                    422),
                json("POST", "/select_and_reserve", "{\"token_ids\":true}", 422),
                bare("GET", "/loads", 200),
                bare("GET", "/loads?model_name=default", 200),
                json("POST", "/potential_loads", "{\"token_ids\":" + tokens + "}", 200),
                json("POST", "/potential_loads", "{\"token_ids\":{}}", 422),
                json("POST", "/overlap_scores", "{\"token_ids\":" + tokens + "}", 200),
                json(
                    "POST",
                    "/overlap_scores",
                    "{\"block_hashes\":[1],\"sequence_hashes\":[1,2],\"isl_tokens\":4}",
                    400),
                bare("POST", "/reservations/r-1/prefill_complete", 200),
                bare("POST", "/reservations/nope/prefill_complete", 404),
                json("POST", "/reservations/r-1/output_block", "{\"decay_fraction\":0.5}", 200),
                bare("POST", "/reservations/r-1/output_block", 200),
                json("POST", "/reservations/r-1/output_block", "{\"decay_fraction\":2}", 400),
                json("POST", "/reservations/nope/output_block", "{}", 404),
                bare("GET", "/ui/state", 200),
                bare("GET", "/ui/history", 200),
                bare("DELETE", "/reservations/r-1", 200),
                bare("DELETE", "/reservations/r-1", 404),
                bare("GET", "/dump", 200),
                bare("GET", "/metrics", 200),
                bare("GET", "/config", 200),
                bare("GET", "/replica_sync/peers", 200),
                json("POST", "/replica_sync/register_peer", "{\"endpoint\":\"tcp://h:1\"}", 409),
                new Step("POST", "/replica_sync/register_peer", "endpoint=x", "text/plain", 415),
                json("POST", "/replica_sync/deregister_peer", "{\"endpoint\":\"tcp://h:1\"}", 409),
                bare("GET", "/ui", 200),
                bare("GET", "/ui/", 200),
                bare("GET", "/ui/app.js", 200),
                bare("GET", "/ui/app.css", 200),
                bare("GET", "/openapi.json", 200),
                bare("DELETE", "/workers/abc", 400),
                bare("DELETE", "/workers/999", 404),
                bare("DELETE", "/workers/73", 200)));
    Set<String> exercised = new TreeSet<>();
    List<String> failures = new ArrayList<>();
    for (Step s : steps) {
      Answer a = send(s.method(), s.path(), s.body(), s.contentType());
      String what =
          s.method() + " " + s.path() + (s.body() == null ? "" : " " + abbreviate(s.body()));
      if (a.status() != s.expected()) {
        failures.add(
            what
                + ": expected "
                + s.expected()
                + ", got "
                + a.status()
                + " "
                + abbreviate(a.body()));
        continue;
      }
      try {
        doc.check(s.method(), s.path(), a.status(), a.contentType(), a.body());
        if (a.status() < 300 && s.body() != null) {
          doc.checkRequest(s.method(), s.path(), s.body());
        }
      } catch (AssertionError e) {
        failures.add(what + ": " + e.getMessage());
      }
      exercised.add(s.method() + " " + doc.template(s.method(), s.path()));
    }
    assertEquals(List.of(), failures);
    assertEquals(doc.operations(), exercised, "every documented operation is exercised");
  }

  private static String abbreviate(String s) {
    return s.length() < 300 ? s : s.substring(0, 300) + "...";
  }
}
