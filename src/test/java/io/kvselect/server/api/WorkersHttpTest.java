package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Worker catalog, lifecycle and readiness over real HTTP (Dynamo tests 1, 2 and catalog rules). */
class WorkersHttpTest {

  @Test
  void readinessWithoutWorkersIs503AndSelectIs503() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      assertEquals(200, n.get("/health").status());
      assertEquals("ok", n.get("/health").body().get("status").asText());
      NodeHarness.Reply ready = n.get("/ready");
      assertEquals(503, ready.status());
      assertFalse(ready.body().get("ready").asBoolean());
      assertEquals(0, ready.body().get("schedulable_workers").asInt());
      NodeHarness.Reply sel = n.post("/select", "{\"token_ids\":[1,2,3,4]}");
      assertEquals(503, sel.status());
      assertTrue(sel.error().contains("no schedulable workers"), sel.raw());
      n.worker(1);
      assertEquals(200, n.get("/ready").status());
      assertEquals(1, n.get("/ready").body().get("schedulable_workers").asInt());
    }
  }

  @Test
  void queueingWithoutBatchedTokensLeavesWorkerIncomplete() throws Exception {
    try (NodeHarness n =
        new NodeHarness(
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "2.0"))) {
      NodeHarness.Reply r = n.worker(1);
      assertEquals(201, r.status());
      assertEquals("incomplete", r.body().get("lifecycle").asText());
      assertTrue(
          r.body()
              .get("not_schedulable_reasons")
              .get(0)
              .asText()
              .contains("max_num_batched_tokens"));
      assertEquals(503, n.post("/select", "{\"token_ids\":[1,2,3,4]}").status());
      NodeHarness.Reply ok = n.worker(1, "max_num_batched_tokens", 8192);
      assertEquals("schedulable", ok.body().get("lifecycle").asText());
      assertNull(ok.body().get("not_schedulable_reasons"));
    }
  }

  @Test
  void kvEventsEndpointRequiredPerRankWhenEventsAreOn() throws Exception {
    try (NodeHarness n = new NodeHarness(Map.of())) {
      NodeHarness.Reply r =
          n.post(
              "/workers",
              Map.of(
                  "worker_id",
                  7,
                  "endpoint",
                  "http://w",
                  "block_size",
                  16,
                  "data_parallel_size",
                  2,
                  "kv_events_endpoints",
                  Map.of("0", "tcp://127.0.0.1:5557")));
      assertEquals(201, r.status());
      assertEquals("incomplete", r.body().get("lifecycle").asText());
      assertEquals(
          "kv_events endpoint is required for dp_rank 1"
              + " (set kv_events_endpoint, or kv_events_endpoints for each rank)",
          r.body().get("not_schedulable_reasons").get(0).asText());
      NodeHarness.Reply fixed =
          n.patch(
              "/workers/7",
              Map.of(
                  "kv_events_endpoints",
                  Map.of("0", "tcp://127.0.0.1:5557", "1", "tcp://127.0.0.1:5558")));
      assertEquals(200, fixed.status());
      assertEquals("schedulable", fixed.body().get("lifecycle").asText());
      assertEquals(
          "tcp://127.0.0.1:5558", fixed.body().get("kv_events_endpoints").get("1").asText());
    }
  }

  @Test
  void unknownFieldsAreAcceptedButNamedInWarningsAndTheLog() throws Exception {
    ch.qos.logback.classic.Logger ops =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(ApiOperations.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> log =
        new ch.qos.logback.core.read.ListAppender<>();
    log.start();
    ops.addAppender(log);
    try (NodeHarness n = new NodeHarness(Map.of())) {
      NodeHarness.Reply r =
          n.post(
              "/workers",
              Map.of(
                  "worker_id",
                  7,
                  "endpoint",
                  "http://w",
                  "block_size",
                  16,
                  "kv_event_endpoint",
                  "tcp://127.0.0.1:5557"));
      assertEquals(201, r.status(), "Dynamo's leniency: an unknown field is still accepted");
      assertEquals("incomplete", r.body().get("lifecycle").asText());
      assertEquals(
          "unknown field `kv_event_endpoint` ignored (did you mean `kv_events_endpoint`?)",
          r.body().get("warnings").get(0).asText(),
          r.raw());
      assertEquals(1, r.body().get("warnings").size());
      assertTrue(
          r.body().get("not_schedulable_reasons").get(0).asText().contains("kv_events_endpoint"),
          r.raw());
      assertTrue(
          log.list.stream()
              .anyMatch(
                  e ->
                      e.getLevel() == ch.qos.logback.classic.Level.WARN
                          && e.getFormattedMessage()
                              .contains("worker 7: unknown field `kv_event_endpoint` ignored")),
          log.list.toString());

      NodeHarness.Reply patched =
          n.patch("/workers/7", Map.of("kv_events_endpoint", "tcp://127.0.0.1:5557", "zzz", 1));
      assertEquals(200, patched.status());
      assertEquals("schedulable", patched.body().get("lifecycle").asText());
      assertEquals(
          "unknown field `zzz` ignored",
          patched.body().get("warnings").get(0).asText(),
          patched.raw());

      NodeHarness.Reply clean = n.worker(8);
      assertNull(clean.body().get("warnings"), "no warnings key when every field is known");
      assertNull(
          n.get("/workers/7").body().get("warnings"),
          "warnings describe a request, not the record");
    } finally {
      ops.detachAppender(log);
    }
  }

  @Test
  void blockSizeMismatchInPartitionMakesWorkerIncomplete() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      NodeHarness.Reply r = n.worker(2, "block_size", 16);
      assertEquals("incomplete", r.body().get("lifecycle").asText());
      assertTrue(
          r.body().get("not_schedulable_reasons").get(0).asText().contains("block_size mismatch"),
          r.raw());
      NodeHarness.Reply other = n.worker(3, "block_size", 16, "model_name", "other");
      assertEquals("schedulable", other.body().get("lifecycle").asText());
    }
  }

  @Test
  void upsertMovesWorkerBetweenPartitionsAndDeleteReturnsLastRecord() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.worker(2);
      assertEquals(2, n.get("/workers").body().size());
      NodeHarness.Reply moved = n.worker(1, "model_name", "m2", "routing_group", "g2");
      assertEquals(201, moved.status());
      assertEquals("m2", moved.body().get("model_name").asText());
      JsonNode inDefault = n.get("/workers?model_name=default").body();
      assertEquals(1, inDefault.size());
      assertEquals(2, inDefault.get(0).get("worker_id").asLong());
      NodeHarness.Reply sel =
          n.post(
              "/select",
              "{\"model_name\":\"m2\",\"routing_group\":\"g2\",\"token_ids\":[1,2,3,4]}");
      assertEquals(200, sel.status());
      assertEquals(1, sel.body().get("worker_id").asLong());
      NodeHarness.Reply del = n.delete("/workers/1");
      assertEquals(200, del.status());
      assertEquals("unschedulable", del.body().get("lifecycle").asText());
      assertEquals(404, n.delete("/workers/1").status());
      assertEquals(404, n.patch("/workers/1", Map.of("endpoint", "x")).status());
      assertEquals(
          503,
          n.post(
                  "/select",
                  "{\"model_name\":\"m2\",\"routing_group\":\"g2\",\"token_ids\":[1,2,3,4]}")
              .status());
    }
  }

  @Test
  void largeUnsignedWorkerIdsRoundTrip() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      NodeHarness.Reply r =
          n.post(
              "/workers",
              "{\"worker_id\":18446744073709551615,\"endpoint\":\"http://w\",\"block_size\":4}");
      assertEquals(201, r.status(), r.raw());
      assertTrue(r.raw().contains("\"worker_id\":18446744073709551615"), r.raw());
      NodeHarness.Reply sel = n.post("/select", "{\"token_ids\":[1,2,3,4]}");
      assertTrue(sel.raw().contains("\"worker_id\":18446744073709551615"), sel.raw());
      assertEquals(200, n.delete("/workers/18446744073709551615").status());
    }
  }
}
