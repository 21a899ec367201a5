package io.kvselect.server.bus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Valid bodies of every address with one field replaced by a value of another type or range (or
 * removed), sent over the event bus to one node: every request is answered within the send
 * timeout (nothing blocks or hangs), never with a 500, a failure is one of the contract's codes
 * with an {@code {"error": ...}} envelope, and a failed request changes nothing (catalog, loads,
 * bookings, pending selections). Seeded and bounded; properties run one at a time.
 */
class EventBusFuzzTest {

  private static final Set<Integer> CODES = Set.of(400, 404, 409, 413, 415, 422, 429, 503);
  private static final JsonArray PROMPT = new JsonArray(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9));

  private static BusHarness h;

  /** Selection ids handed out to valid bookings; owned by the (single) property thread. */
  private static long ids;

  @BeforeContainer
  static void start() throws Exception {
    h = new BusHarness("--session-affinity-ttl-secs", "600");
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(2).put("data_parallel_size", 2));
    h.ok(
        BusAddresses.SELECT_AND_RESERVE,
        new JsonObject().put("selection_id", "live").put("token_ids", PROMPT.copy()));
  }

  @AfterContainer
  static void stop() throws Exception {
    h.close();
  }

  /** A valid body for each address (ids that exist: worker 1 and 2, booking "live"). */
  private static Map<String, JsonObject> valid() {
    JsonObject prompt = new JsonObject().put("token_ids", PROMPT.copy());
    String id = "f-" + ids++;
    return Map.ofEntries(
        Map.entry(
            BusAddresses.SELECT,
            prompt
                .copy()
                .put("selection_id", id)
                .put("session_id", "s-" + (ids % 5))
                .put("router_config_override", new JsonObject().put("overlap_score_weight", 1.0))
                .put(
                    "routing_constraints",
                    new JsonObject().put("required_taints", new JsonArray()))),
        Map.entry(
            BusAddresses.SELECT_AND_RESERVE,
            prompt
                .copy()
                .put("selection_id", id)
                .put("expected_output_tokens", 8)
                .put("pinned_worker", new JsonObject().put("worker_id", 2).put("dp_rank", 1))),
        Map.entry(
            BusAddresses.RESERVE,
            prompt.copy().put("selection_id", id).put("worker_id", 1).put("dp_rank", 0)),
        Map.entry(BusAddresses.PREFILL_COMPLETE, new JsonObject().put("selection_id", "live")),
        Map.entry(
            BusAddresses.OUTPUT_BLOCK,
            new JsonObject().put("selection_id", "live").put("decay_fraction", 0.5)),
        Map.entry(BusAddresses.FREE, new JsonObject().put("selection_id", id)),
        Map.entry(BusAddresses.WORKERS_LIST, new JsonObject().put("model_name", "default")),
        Map.entry(BusAddresses.WORKERS_GET, new JsonObject().put("worker_id", 1)),
        Map.entry(
            BusAddresses.WORKERS_CREATE,
            BusHarness.worker(3)
                .put("taints", new JsonArray().add("a"))
                .put("topology_domains", new JsonObject().put("zone", "z1"))),
        Map.entry(
            BusAddresses.WORKERS_PATCH,
            new JsonObject().put("worker_id", 3).put("max_num_batched_tokens", 4096)),
        Map.entry(BusAddresses.WORKERS_DELETE, new JsonObject().put("worker_id", 3)));
  }

  @Provide
  Arbitrary<Object> values() {
    JsonArray deep = new JsonArray();
    JsonArray cur = deep;
    for (int i = 0; i < 200; i++) {
      JsonArray next = new JsonArray();
      cur.add(next);
      cur = next;
    }
    return Arbitraries.of(
        null,
        "",
        "x",
        "\ud800",
        "9".repeat(40),
        -1,
        0,
        1.5,
        Long.MIN_VALUE,
        BigInteger.ONE.shiftLeft(64),
        1e300,
        true,
        new JsonArray(),
        new JsonArray().add(1).addNull(),
        new JsonArray().add("a").add(new JsonObject()),
        new JsonObject(),
        new JsonObject().put("worker_id", "x"),
        deep,
        "y".repeat(100_000));
  }

  @Property(tries = 300, seed = "6043")
  void mutatedBodiesNeverFailBadlyAndFailuresChangeNothing(
      @ForAll("addresses") String address,
      @ForAll("fields") String field,
      @ForAll("values") Object value,
      @ForAll boolean remove)
      throws Exception {
    JsonObject body = valid().get(address);
    if (remove) {
      body.remove(field);
    } else {
      body.put(
          field,
          value instanceof JsonObject o
              ? o.copy()
              : value instanceof JsonArray a ? a.copy() : value);
    }
    String before = state();
    BusHarness.Answer a = h.send(address, body);
    Statistics.collect(a.ok() ? "ok" : a.failureCode());
    if (a.ok()) {
      return;
    }
    assertEquals(
        ReplyFailure.RECIPIENT_FAILURE, a.failureType(), () -> address + " " + body + " -> " + a);
    assertTrue(CODES.contains(a.failureCode()), () -> address + " " + body + " -> " + a);
    assertNotEquals(null, a.envelope().getString("error"));
    assertEquals(
        before,
        state(),
        () -> address + " " + body + " failed with " + a + " but changed the state");
  }

  @Provide
  Arbitrary<String> addresses() {
    return Arbitraries.of(BusAddresses.API);
  }

  @Provide
  Arbitrary<String> fields() {
    return Arbitraries.of(
        "selection_id",
        "worker_id",
        "token_ids",
        "dp_rank",
        "model_name",
        "routing_group",
        "session_id",
        "expected_output_tokens",
        "pinned_worker",
        "router_config_override",
        "routing_constraints",
        "decay_fraction",
        "block_size",
        "data_parallel_size",
        "taints",
        "topology_domains",
        "endpoint",
        "max_num_batched_tokens",
        "effective_prefill_tokens",
        "allowed_worker_ids",
        "unknown_field");
  }

  private static String state() throws Exception {
    return String.valueOf(h.send(BusAddresses.WORKERS_LIST, new JsonObject()).body())
        + h.http("GET", "/loads", null).body()
        + h.kvselect.service().bookingCount()
        + "/"
        + h.kvselect.service().pendingSelections();
  }
}
