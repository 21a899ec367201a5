package io.kvselect.server.bus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The published events on a plain Vert.x: one {@code kvselect.events.selections} message per
 * booking (whichever front-end or form booked it) and one {@code kvselect.events.workers} message
 * per catalog change, each with {@code v: 1}, the node id and a per-address sequence number.
 */
class BusEventsTest {

  private static final JsonArray PROMPT = new JsonArray(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));

  private BusHarness h;
  private final LinkedBlockingQueue<JsonObject> selections = new LinkedBlockingQueue<>();
  private final LinkedBlockingQueue<JsonObject> workers = new LinkedBlockingQueue<>();

  @BeforeEach
  void start() throws Exception {
    h = new BusHarness("--session-affinity-ttl-secs", "600");
    MessageConsumer<JsonObject> s =
        h.vertx.eventBus().consumer(BusAddresses.EVENTS_SELECTIONS, m -> selections.add(m.body()));
    MessageConsumer<JsonObject> w =
        h.vertx.eventBus().consumer(BusAddresses.EVENTS_WORKERS, m -> workers.add(m.body()));
    s.completion()
        .compose(v -> w.completion())
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  private static JsonObject next(LinkedBlockingQueue<JsonObject> q) throws InterruptedException {
    JsonObject e = q.poll(10, TimeUnit.SECONDS);
    assertNotNull(e, "no event within 10 s");
    return e;
  }

  @Test
  void everyCatalogChangeIsPublishedInOrder() throws Exception {
    h.ok(BusAddresses.WORKERS_CREATE, new JsonObject().put("worker_id", 5).put("block_size", 4));
    h.ok(
        BusAddresses.WORKERS_PATCH,
        new JsonObject().put("worker_id", 5).put("endpoint", "http://w5:8000"));
    assertEquals(
        201,
        h.http(
                "POST",
                "/workers",
                "{\"worker_id\":5,\"model_name\":\"m\",\"endpoint\":\"http://w5:8000\",\"block_size\":4}")
            .status());
    h.ok(BusAddresses.WORKERS_DELETE, new JsonObject().put("worker_id", 5));
    assertEquals(
        422,
        h.send(BusAddresses.WORKERS_CREATE, new JsonObject().put("block_size", 4)).failureCode());

    JsonObject registered = next(workers);
    assertEquals(1, registered.getInteger("v"));
    assertEquals(h.kvselect.node(), registered.getString("node"));
    assertEquals("registered", registered.getString("kind"));
    assertEquals(5L, registered.getLong("worker_id"));
    assertEquals("default", registered.getString("model_name"));
    assertEquals("incomplete", registered.getString("lifecycle"), "no endpoint yet");
    assertNull(registered.getValue("previous_lifecycle"));
    assertFalse(registered.getJsonArray("not_schedulable_reasons").isEmpty());
    assertEquals(5L, registered.getJsonObject("worker").getLong("worker_id"));

    JsonObject patched = next(workers);
    assertEquals("updated", patched.getString("kind"));
    assertEquals("schedulable", patched.getString("lifecycle"));
    assertEquals("incomplete", patched.getString("previous_lifecycle"));
    assertTrue(patched.getJsonArray("not_schedulable_reasons").isEmpty());
    assertEquals("http://w5:8000", patched.getJsonObject("worker").getString("endpoint"));

    // re-registered in another partition over HTTP: removed from the old one, registered in the new
    JsonObject moved = next(workers);
    assertEquals("removed", moved.getString("kind"));
    assertEquals("default", moved.getString("model_name"));
    JsonObject again = next(workers);
    assertEquals("registered", again.getString("kind"));
    assertEquals("m", again.getString("model_name"));

    JsonObject deleted = next(workers);
    assertEquals("removed", deleted.getString("kind"));
    assertEquals("unschedulable", deleted.getString("lifecycle"));
    assertEquals("schedulable", deleted.getString("previous_lifecycle"));

    List<Long> seqs =
        List.of(
            registered.getLong("seq"),
            patched.getLong("seq"),
            moved.getLong("seq"),
            again.getLong("seq"),
            deleted.getLong("seq"));
    assertEquals(List.of(0L, 1L, 2L, 3L, 4L), seqs);
    // events leave in order from one context: the next one proves the failed create published
    // nothing
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(6));
    assertEquals(6L, next(workers).getLong("worker_id"), "the failed create published nothing");
  }

  @Test
  void everyBookingIsPublishedOnce() throws Exception {
    h.ok(BusAddresses.WORKERS_CREATE, BusHarness.worker(1));
    next(workers);
    JsonObject select = new JsonObject().put("token_ids", PROMPT.copy());

    JsonObject first =
        h.ok(
            BusAddresses.SELECT_AND_RESERVE,
            select.copy().put("selection_id", "a").put("session_id", "s-1"));
    JsonObject e1 = next(selections);
    assertEquals(1, e1.getInteger("v"));
    assertEquals(0L, e1.getLong("seq"));
    assertEquals(h.kvselect.node(), e1.getString("node"));
    assertEquals("a", e1.getString("selection_id"));
    assertEquals("default", e1.getString("model_name"));
    assertEquals("default", e1.getString("routing_group"));
    assertEquals(1L, e1.getLong("worker_id"));
    assertEquals(0, e1.getInteger("dp_rank"));
    assertEquals("s-1", e1.getString("session_id"));
    assertEquals(0L, e1.getLong("overlap_blocks"));
    assertEquals(first.getLong("isl_tokens"), e1.getLong("isl_tokens"));
    assertEquals(first.getLong("effective_prefill_tokens"), e1.getLong("effective_prefill_tokens"));

    // the same prompt again over HTTP: its blocks are now credited as cached on worker 1
    String again =
        h.http("POST", "/select_and_reserve", select.copy().put("selection_id", "b").encode())
            .body();
    JsonObject second = new JsonObject(again);
    JsonObject e2 = next(selections);
    assertEquals("b", e2.getString("selection_id"));
    assertFalse(e2.containsKey("session_id"), "no session: no session_id");
    long overlap = (second.getLong("isl_tokens") - second.getLong("effective_prefill_tokens")) / 4;
    assertTrue(overlap > 0, () -> "the second booking should see overlap: " + again);
    assertEquals(overlap, e2.getLong("overlap_blocks"));

    // a select books nothing; its replay and an explicit reservation book once each
    h.ok(BusAddresses.SELECT, select.copy().put("selection_id", "c"));
    h.ok(BusAddresses.RESERVE, new JsonObject().put("selection_id", "c"));
    assertEquals("c", next(selections).getString("selection_id"));
    h.ok(BusAddresses.RESERVE, select.copy().put("selection_id", "d").put("worker_id", 1));
    JsonObject e4 = next(selections);
    assertEquals("d", e4.getString("selection_id"));
    assertEquals(3L, e4.getLong("seq"));

    // failures and lifecycle steps publish no booking
    assertEquals(
        422,
        h.send(BusAddresses.SELECT_AND_RESERVE, select.copy().put("selection_id", 1))
            .failureCode());
    h.ok(BusAddresses.PREFILL_COMPLETE, new JsonObject().put("selection_id", "a"));
    h.ok(BusAddresses.FREE, new JsonObject().put("selection_id", "a"));
    h.ok(BusAddresses.SELECT_AND_RESERVE, select.copy().put("selection_id", "z"));
    assertEquals("z", next(selections).getString("selection_id"), "only bookings are published");
  }
}
