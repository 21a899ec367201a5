package io.kvselect.server.bus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The same request over HTTP and over the event bus gets the same answer. Two identical nodes
 * receive the same sequence of requests, one over HTTP and the other over its event bus, so both
 * are in the same state before every request: a success's reply equals the HTTP response body, a
 * failure's code and message equal the HTTP status and error body (byte for byte). Requests avoid
 * random choices (one eligible worker, explicit selection ids).
 */
class HttpBusEqualityTest {

  private static final String PROMPT = "\"token_ids\":[1,2,3,4,5,6,7,8,9,10,11]";

  private BusHarness web;
  private BusHarness bus;

  @BeforeEach
  void start() throws Exception {
    web = new BusHarness("--session-affinity-ttl-secs", "600");
    bus = new BusHarness("--session-affinity-ttl-secs", "600");
  }

  @AfterEach
  void stop() throws Exception {
    try {
      web.close();
    } finally {
      bus.close();
    }
  }

  private static Object json(String body) {
    return Json.decodeValue(Buffer.buffer(body));
  }

  /**
   * Sends the request over HTTP to one node and over the bus to the other and compares the
   * answers; {@code busBody} is the JSON text of the bus body (null: no body). Returns the HTTP status.
   */
  private int both(String method, String path, String httpBody, String address, String busBody)
      throws Exception {
    BusHarness.HttpAnswer h = web.http(method, path, httpBody);
    BusHarness.Answer b = bus.send(address, busBody == null ? null : json(busBody));
    String what = method + " " + path + " " + httpBody + " vs " + address + " " + busBody;
    if (h.status() < 300) {
      assertTrue(b.ok(), () -> what + ": HTTP " + h + " but bus " + b);
      assertEquals(json(h.body()), b.body(), what);
    } else {
      assertEquals(h.status(), b.failureCode(), () -> what + ": HTTP " + h + " but bus " + b);
      assertEquals(json(h.body()), b.envelope(), what);
      assertEquals(h.body(), b.failureMessage(), what + " (byte for byte)");
    }
    return h.status();
  }

  private int both(String path, String address, String body) throws Exception {
    return both("POST", path, body, address, body);
  }

  private static String idBody(String id) {
    return "{\"selection_id\":\"" + id + "\"}";
  }

  @Test
  void catalogAnswersAreEqual() throws Exception {
    assertEquals(
        201,
        both(
            "/workers",
            BusAddresses.WORKERS_CREATE,
            "{\"worker_id\":1,\"endpoint\":\"http://w1:8000\",\"block_size\":4,\"taints\":[\"b\",\"a\"],\"data_parallel_size\":2}"));
    assertEquals(
        201,
        both(
            "/workers",
            BusAddresses.WORKERS_CREATE,
            "{\"worker_id\":2,\"model_name\":\"m2\",\"endpoint\":\"http://w2:8000\",\"block_size\":4}"));
    assertEquals(
        201, both("/workers", BusAddresses.WORKERS_CREATE, "{\"worker_id\":3}")); // incomplete
    assertEquals(200, both("GET", "/workers", null, BusAddresses.WORKERS_LIST, "{}"));
    assertEquals(
        200,
        both(
            "GET",
            "/workers?model_name=m2",
            null,
            BusAddresses.WORKERS_LIST,
            "{\"model_name\":\"m2\"}"));
    assertEquals(
        200,
        both(
            "GET",
            "/workers?model_name=default&routing_group=default",
            null,
            BusAddresses.WORKERS_LIST,
            "{\"model_name\":\"default\",\"routing_group\":\"default\"}"));
    JsonArray listed = (JsonArray) json(web.http("GET", "/workers", null).body());
    assertEquals(
        listed.getJsonObject(0),
        bus.ok(BusAddresses.WORKERS_GET, new JsonObject().put("worker_id", 1)),
        "workers.get answers the record as GET /workers lists it");
    assertEquals(
        200,
        both(
            "PATCH",
            "/workers/1",
            "{\"endpoint\":\"http://moved:1\"}",
            BusAddresses.WORKERS_PATCH,
            "{\"worker_id\":1,\"endpoint\":\"http://moved:1\"}"));
    assertEquals(
        200,
        both(
            "PATCH",
            "/workers/3",
            "{\"block_size\":4,\"endpoint\":\"http://w3:1\"}",
            BusAddresses.WORKERS_PATCH,
            "{\"worker_id\":3,\"block_size\":4,\"endpoint\":\"http://w3:1\"}"));
    assertEquals(
        200, both("DELETE", "/workers/2", null, BusAddresses.WORKERS_DELETE, "{\"worker_id\":2}"));
    assertEquals(200, both("GET", "/workers", null, BusAddresses.WORKERS_LIST, "{}"));
  }

  @Test
  void selectionAndReservationAnswersAreEqual() throws Exception {
    both(
        "/workers",
        BusAddresses.WORKERS_CREATE,
        "{\"worker_id\":1,\"endpoint\":\"http://w1:8000\",\"block_size\":4}");
    both(
        "/workers",
        BusAddresses.WORKERS_CREATE,
        "{\"worker_id\":2,\"endpoint\":\"http://w2:8000\",\"block_size\":4,\"data_parallel_size\":2}");
    String two = "\"allowed_worker_ids\":[2],\"pinned_worker\":{\"worker_id\":2,\"dp_rank\":1}";
    assertEquals(
        200, both("/select", BusAddresses.SELECT, "{\"allowed_worker_ids\":[1]," + PROMPT + "}"));
    assertEquals(
        200,
        both(
            "/select",
            BusAddresses.SELECT,
            "{\"selection_id\":\"p-1\"," + two + "," + PROMPT + "}"));
    assertEquals(
        200,
        both(
            "/select_and_reserve",
            BusAddresses.SELECT_AND_RESERVE,
            "{\"selection_id\":\"b-1\",\"session_id\":\"conv-1\",\"expected_output_tokens\":64,"
                + two
                + ","
                + PROMPT
                + "}"));
    // the same prompt again: now its blocks count as cached on worker 2 (approximate index)
    assertEquals(
        200,
        both(
            "/select_and_reserve",
            BusAddresses.SELECT_AND_RESERVE,
            "{\"selection_id\":\"b-2\",\"session_id\":\"conv-1\"," + PROMPT + "}"));
    assertEquals(201, both("/reservations", BusAddresses.RESERVE, idBody("p-1")));
    assertEquals(
        201,
        both(
            "/reservations",
            BusAddresses.RESERVE,
            "{\"selection_id\":\"r-1\",\"worker_id\":1,\"dp_rank\":0,\"effective_prefill_tokens\":3,"
                + PROMPT
                + "}"));
    assertEquals(
        200,
        both(
            "POST",
            "/reservations/b-1/prefill_complete",
            "",
            BusAddresses.PREFILL_COMPLETE,
            idBody("b-1")));
    assertEquals(
        200,
        both(
            "POST",
            "/reservations/b-1/output_block",
            "{\"decay_fraction\":0.25}",
            BusAddresses.OUTPUT_BLOCK,
            "{\"selection_id\":\"b-1\",\"decay_fraction\":0.25}"));
    assertEquals(
        200,
        both(
            "POST",
            "/reservations/b-2/output_block",
            "{}",
            BusAddresses.OUTPUT_BLOCK,
            idBody("b-2")));
    assertEquals(200, both("GET", "/workers", null, BusAddresses.WORKERS_LIST, "{}"));
    for (String id : new String[] {"b-1", "b-2", "p-1", "r-1"}) {
      assertEquals(200, both("DELETE", "/reservations/" + id, null, BusAddresses.FREE, idBody(id)));
    }
    assertEquals(
        web.http("GET", "/loads", null).body(),
        bus.http("GET", "/loads", null).body(),
        "both nodes end in the same state");
  }

  @Test
  void failuresAreEqual() throws Exception {
    assertEquals(
        503, both("/select_and_reserve", BusAddresses.SELECT_AND_RESERVE, "{" + PROMPT + "}"));
    both(
        "/workers",
        BusAddresses.WORKERS_CREATE,
        "{\"worker_id\":1,\"endpoint\":\"http://w1:8000\",\"block_size\":4}");
    String[][] bodies = {
      {"/select", BusAddresses.SELECT, "{\"token_ids\":[1,null,3]}"},
      {
        "/select",
        BusAddresses.SELECT,
        "{\"token_ids\":[1,2],\"routing_constraints\":{\"required_taints\":7}}"
      },
      {"/select", BusAddresses.SELECT, "{\"model_name\":\"other\"," + PROMPT + "}"},
      {
        "/select_and_reserve",
        BusAddresses.SELECT_AND_RESERVE,
        "{\"session_id\":\"\"," + PROMPT + "}"
      },
      {
        "/select_and_reserve",
        BusAddresses.SELECT_AND_RESERVE,
        "{\"priority_jump\":-1," + PROMPT + "}"
      },
      {
        "/select_and_reserve",
        BusAddresses.SELECT_AND_RESERVE,
        "{\"pinned_worker\":{\"worker_id\":1}," + PROMPT + "}"
      },
      {"/reservations", BusAddresses.RESERVE, "{" + PROMPT + "}"},
      {
        "/reservations",
        BusAddresses.RESERVE,
        "{\"selection_id\":\"x\",\"worker_id\":9," + PROMPT + "}"
      },
      {"/reservations", BusAddresses.RESERVE, "{\"selection_id\":\"never-selected\"}"},
      {"/workers", BusAddresses.WORKERS_CREATE, "{\"block_size\":4}"},
      {
        "/workers",
        BusAddresses.WORKERS_CREATE,
        "{\"worker_id\":3,\"kv_transfer_enforcement\":\"maybe\"}"
      },
      {"/workers", BusAddresses.WORKERS_CREATE, "{\"worker_id\":3,\"data_parallel_size\":1e400}"},
    };
    for (String[] b : bodies) {
      int status = both(b[0], b[1], b[2]);
      assertTrue(status >= 400, () -> b[2] + " -> " + status);
    }
    assertEquals(
        404, both("DELETE", "/reservations/nope", null, BusAddresses.FREE, idBody("nope")));
    assertEquals(
        404,
        both(
            "POST",
            "/reservations/nope/prefill_complete",
            "",
            BusAddresses.PREFILL_COMPLETE,
            idBody("nope")));
    assertEquals(
        404,
        both(
            "POST",
            "/reservations/nope/output_block",
            "{}",
            BusAddresses.OUTPUT_BLOCK,
            idBody("nope")));
    assertEquals(
        404, both("PATCH", "/workers/77", "{}", BusAddresses.WORKERS_PATCH, "{\"worker_id\":77}"));
    assertEquals(
        422,
        both(
            "PATCH",
            "/workers/1",
            "{\"block_size\":-4}",
            BusAddresses.WORKERS_PATCH,
            "{\"worker_id\":1,\"block_size\":-4}"));
    assertEquals(
        404,
        both("DELETE", "/workers/77", null, BusAddresses.WORKERS_DELETE, "{\"worker_id\":77}"));
    assertEquals(200, both("GET", "/workers", null, BusAddresses.WORKERS_LIST, "{}"));
  }
}
