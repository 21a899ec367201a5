package io.kvselect.server.bus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every address of the event-bus API on a plain (non-clustered) Vert.x: its success reply (the
 * HTTP response body) and its failures (the HTTP status as failure code, the HTTP error envelope
 * as message, naming the field at fault), and that failed requests change nothing.
 */
class EventBusApiTest {

  private static final JsonArray PROMPT = new JsonArray(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9));

  private BusHarness h;

  @BeforeEach
  void start() throws Exception {
    h = new BusHarness();
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  private static void assertFailure(BusHarness.Answer a, int code, String mentions) {
    assertEquals(
        io.vertx.core.eventbus.ReplyFailure.RECIPIENT_FAILURE,
        a.failureType(),
        () -> "failure type of " + a);
    assertEquals(code, a.failureCode(), () -> "failure code of " + a);
    String error = a.envelope().getString("error");
    assertNotNull(error, () -> "error envelope of " + a);
    assertTrue(error.contains(mentions), () -> "\"" + error + "\" should mention " + mentions);
  }

  private static JsonObject select(Object... kv) {
    JsonObject o = new JsonObject().put("token_ids", PROMPT.copy());
    for (int i = 0; i + 1 < kv.length; i += 2) {
      o.put((String) kv[i], kv[i + 1]);
    }
    return o;
  }

  @Test
  void workersCreate() throws Exception {
    JsonObject w = h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    assertEquals(1L, w.getLong("worker_id"));
    assertEquals("schedulable", w.getString("lifecycle"));
    assertEquals("http://worker-1:8000", w.getString("endpoint"));

    assertFailure(
        h.send(BusAddresses.WORKERS_CREATE, new JsonObject().put("block_size", 4)),
        422,
        "`worker_id`");
    assertFailure(
        h.send(BusAddresses.WORKERS_CREATE, BusHarness.worker(2).put("block_size", "four")),
        422,
        "`block_size`");
    assertEquals(
        1,
        h.kvselect.service().listWorkers(null, null).size(),
        "failed creates registered nothing");
  }

  @Test
  void workersGetAndList() throws Exception {
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(2).put("model_name", "m2"));
    assertEquals(
        2L,
        h.ok(BusAddresses.WORKERS_GET, new JsonObject().put("worker_id", 2)).getLong("worker_id"));
    assertFailure(
        h.send(BusAddresses.WORKERS_GET, new JsonObject().put("worker_id", 9)),
        404,
        "worker 9 not found");
    assertFailure(
        h.send(BusAddresses.WORKERS_GET, new JsonObject().put("worker_id", "two")),
        422,
        "`worker_id`");
    assertFailure(h.send(BusAddresses.WORKERS_GET, new JsonObject()), 422, "`worker_id`");

    BusHarness.Answer all = h.send(BusAddresses.WORKERS_LIST, new JsonObject());
    assertTrue(all.ok(), () -> "list: " + all);
    assertEquals(2, assertInstanceOf(JsonArray.class, all.body()).size());
    BusHarness.Answer m2 =
        h.send(BusAddresses.WORKERS_LIST, new JsonObject().put("model_name", "m2"));
    assertEquals(1, ((JsonArray) m2.body()).size());
    assertEquals(2L, ((JsonArray) m2.body()).getJsonObject(0).getLong("worker_id"));
    assertFailure(
        h.send(BusAddresses.WORKERS_LIST, new JsonObject().put("routing_group", 5)),
        422,
        "`routing_group`");
  }

  @Test
  void workersPatchAndDelete() throws Exception {
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    JsonObject patched =
        h.ok(
            BusAddresses.WORKERS_PATCH,
            new JsonObject().put("worker_id", 1).put("endpoint", "http://moved:9000"));
    assertEquals("http://moved:9000", patched.getString("endpoint"));
    assertFailure(
        h.send(
            BusAddresses.WORKERS_PATCH,
            new JsonObject().put("worker_id", 1).put("block_size", "x")),
        422,
        "`block_size`");
    assertFailure(
        h.send(BusAddresses.WORKERS_PATCH, new JsonObject().put("worker_id", 7)),
        404,
        "worker 7 not found");
    assertFailure(
        h.send(BusAddresses.WORKERS_PATCH, new JsonObject().put("endpoint", "x")),
        422,
        "`worker_id`");
    assertEquals(
        "http://moved:9000",
        h.kvselect.service().worker(1).spec().endpoint(),
        "failed patches changed nothing");

    JsonObject deleted = h.ok(BusAddresses.WORKERS_DELETE, new JsonObject().put("worker_id", 1));
    assertEquals("unschedulable", deleted.getString("lifecycle"));
    assertFailure(
        h.send(BusAddresses.WORKERS_DELETE, new JsonObject().put("worker_id", 1)),
        404,
        "worker 1 not found");
    assertFailure(
        h.send(BusAddresses.WORKERS_DELETE, new JsonObject().put("worker_id", -1)),
        422,
        "`worker_id`");
  }

  @Test
  void selectAndSelectAndReserve() throws Exception {
    assertFailure(h.send(BusAddresses.SELECT, select()), 503, "no schedulable workers");
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));

    JsonObject s = h.ok(BusAddresses.SELECT, select("selection_id", "q-1"));
    assertEquals(1L, s.getLong("worker_id"));
    assertEquals("q-1", s.getString("selection_id"));
    assertEquals(0, h.kvselect.service().bookingCount(), "select books nothing");
    assertFailure(h.send(BusAddresses.SELECT, select("token_ids", "abc")), 422, "`token_ids`");

    JsonObject b = h.ok(BusAddresses.SELECT_AND_RESERVE, select("selection_id", "b-1"));
    assertEquals("b-1", b.getString("selection_id"));
    assertEquals(9L, b.getLong("isl_tokens"));
    assertNotNull(b.getJsonArray("sequence_hashes"));
    assertEquals(1, h.kvselect.service().bookingCount());
    assertFailure(
        h.send(BusAddresses.SELECT_AND_RESERVE, select("expected_output_tokens", -3)),
        422,
        "`expected_output_tokens`");
    assertFailure(
        h.send(BusAddresses.SELECT_AND_RESERVE, select("model_name", "nope")), 503, "nope");
    assertEquals(1, h.kvselect.service().bookingCount(), "failed bookings booked nothing");
  }

  @Test
  void reservationLifecycle() throws Exception {
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    JsonObject r = h.ok(BusAddresses.RESERVE, select("selection_id", "r-1", "worker_id", 1));
    assertEquals("r-1", r.getString("selection_id"));
    assertEquals(1L, r.getLong("worker_id"));
    assertFailure(h.send(BusAddresses.RESERVE, select("worker_id", 1)), 422, "`selection_id`");
    assertFailure(
        h.send(BusAddresses.RESERVE, select("selection_id", "r-2", "worker_id", 5)),
        404,
        "worker 5");
    assertEquals(1, h.kvselect.service().bookingCount());

    JsonObject id = new JsonObject().put("selection_id", "r-1");
    assertEquals(new JsonObject().put("status", "ok"), h.ok(BusAddresses.PREFILL_COMPLETE, id));
    assertFailure(
        h.send(BusAddresses.PREFILL_COMPLETE, new JsonObject().put("selection_id", "zz")),
        404,
        "zz");
    assertFailure(h.send(BusAddresses.PREFILL_COMPLETE, new JsonObject()), 422, "`selection_id`");

    assertEquals(
        new JsonObject().put("status", "ok"),
        h.ok(BusAddresses.OUTPUT_BLOCK, id.copy().put("decay_fraction", 0.5)));
    assertFailure(
        h.send(BusAddresses.OUTPUT_BLOCK, id.copy().put("decay_fraction", 1.5)),
        400,
        "decay_fraction");
    assertFailure(
        h.send(BusAddresses.OUTPUT_BLOCK, id.copy().put("decay_fraction", "half")),
        422,
        "`decay_fraction`");

    assertFailure(
        h.send(BusAddresses.FREE, new JsonObject().put("selection_id", 12)), 422, "`selection_id`");
    assertFailure(
        h.send(BusAddresses.FREE, new JsonObject().put("selection_id", "")), 422, "`selection_id`");
    assertEquals(1, h.kvselect.service().bookingCount(), "failed frees freed nothing");
    assertEquals(new JsonObject().put("status", "ok"), h.ok(BusAddresses.FREE, id));
    assertEquals(0, h.kvselect.service().bookingCount());
    assertFailure(h.send(BusAddresses.FREE, id), 404, "reservation r-1 not found");
  }

  @Test
  void bodyTypes() throws Exception {
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    for (String address : BusAddresses.API) {
      assertFailure(h.send(address, 42), 415, "JsonObject");
      assertFailure(h.send(address, null), 400, "EOF");
      assertFailure(h.send(address, new JsonArray().add(1)), 422, "expected a JSON object");
      assertFailure(h.send(address, "{\"token_ids\": [1,"), 400, "Failed to parse");
    }
    byte[] huge = new byte[(int) io.kvselect.server.api.HttpApiVerticle.BODY_LIMIT + 1];
    java.util.Arrays.fill(huge, (byte) ' ');
    assertFailure(h.send(BusAddresses.SELECT, Buffer.buffer(huge)), 413, "exceeds the limit");
    assertEquals(
        1L,
        h.ok(BusAddresses.SELECT, select().encode()).getLong("worker_id"),
        "a JSON string body is accepted");
    assertEquals(
        1L,
        h.ok(BusAddresses.SELECT, select().toBuffer()).getLong("worker_id"),
        "a JSON buffer body is accepted");
    assertEquals(0, h.kvselect.service().bookingCount());
    assertEquals(1, h.kvselect.service().listWorkers(null, null).size());
  }

  /** A failing request changes nothing: catalog, loads, bookings and pending selections stay as they were. */
  @Test
  void failuresChangeNothing() throws Exception {
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(2));
    h.ok(BusAddresses.SELECT_AND_RESERVE, select("selection_id", "keep"));
    String before = snapshot();
    List<Object[]> bad =
        List.of(
            new Object[] {BusAddresses.SELECT_AND_RESERVE, select("selection_id", "keep")},
            new Object[] {
              BusAddresses.SELECT_AND_RESERVE,
              select("pinned_worker", new JsonObject().put("worker_id", 3))
            },
            new Object[] {BusAddresses.SELECT, select("selection_id", 5)},
            new Object[] {BusAddresses.RESERVE, select("selection_id", "keep", "worker_id", 1)},
            new Object[] {
              BusAddresses.RESERVE, select("selection_id", "new", "worker_id", 1, "dp_rank", 4)
            },
            new Object[] {
              BusAddresses.WORKERS_CREATE, BusHarness.worker(3).put("data_parallel_size", -1)
            },
            new Object[] {
              BusAddresses.WORKERS_PATCH, new JsonObject().put("worker_id", 2).put("taints", "gpu")
            },
            new Object[] {BusAddresses.WORKERS_DELETE, new JsonObject().put("worker_id", "1")},
            new Object[] {BusAddresses.FREE, new JsonObject().put("selection_id", "other")},
            new Object[] {
              BusAddresses.PREFILL_COMPLETE, new JsonObject().put("selection_id", List.of("keep"))
            });
    for (Object[] b : bad) {
      BusHarness.Answer a = h.send((String) b[0], b[1]);
      assertTrue(
          a.failureCode() >= 400 && a.failureCode() < 500, () -> b[0] + " " + b[1] + " -> " + a);
      assertEquals(before, snapshot(), () -> b[0] + " " + b[1] + " changed the state");
    }
  }

  private String snapshot() throws Exception {
    return h.http("GET", "/workers", null).body()
        + h.http("GET", "/loads", null).body()
        + h.kvselect.service().bookingCount()
        + "/"
        + h.kvselect.service().pendingSelections();
  }

  @Test
  void undeployUnregistersTheAddresses() throws Exception {
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    h.kvselect
        .undeploy()
        .toCompletionStage()
        .toCompletableFuture()
        .get(20, java.util.concurrent.TimeUnit.SECONDS);
    BusHarness.Answer a = h.send(BusAddresses.WORKERS_LIST, new JsonObject());
    assertEquals(
        io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS,
        a.failureType(),
        () -> "after undeploy: " + a);
  }

  @Test
  void bufferWithUnsignedIds() throws Exception {
    String id = "18446744073709551615";
    BusHarness.Answer a =
        h.send(
            BusAddresses.WORKERS_CREATE,
            Buffer.buffer(
                "{\"worker_id\":" + id + ",\"endpoint\":\"http://w:1\",\"block_size\":4}"));
    assertEquals(
        new java.math.BigInteger(id),
        new java.math.BigInteger(String.valueOf(a.json().getValue("worker_id"))));
    assertEquals(
        id,
        String.valueOf(
            h.ok(
                    BusAddresses.WORKERS_GET,
                    new JsonObject().put("worker_id", new java.math.BigInteger(id)))
                .getValue("worker_id")));
  }
}
