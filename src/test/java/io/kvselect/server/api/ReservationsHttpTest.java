package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Booking and the reservation lifecycle over real HTTP (Dynamo tests 5-12, 19, 24). */
class ReservationsHttpTest {

  private static final String PROMPT = "\"token_ids\":[1,2,3,4]";

  @Test
  void selectAndReserveBooksAndDuplicateIdConflicts() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      NodeHarness.Reply r =
          n.post("/select_and_reserve", "{\"selection_id\":\"r-1\"," + PROMPT + "}");
      assertEquals(200, r.status(), r.raw());
      assertEquals("r-1", r.body().get("selection_id").asText());
      assertEquals(4, n.load(1, 0).get("potential_prefill_tokens").asLong());
      assertEquals(1, n.load(1, 0).get("active_requests").asLong());
      NodeHarness.Reply dup =
          n.post("/select_and_reserve", "{\"selection_id\":\"r-1\"," + PROMPT + "}");
      assertEquals(409, dup.status());
      assertTrue(dup.error().contains("already reserved"));
      assertEquals(200, n.delete("/reservations/r-1").status());
      assertEquals(0, n.load(1, 0).get("active_requests").asLong());
      assertEquals(0, n.load(1, 0).get("potential_prefill_tokens").asLong());
      assertEquals(404, n.delete("/reservations/r-1").status());
    }
  }

  @Test
  void outputBlockGrowsDecodeBlocksByOneAndValidatesFraction() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.post("/select_and_reserve", "{\"selection_id\":\"o-1\"," + PROMPT + "}");
      long before = n.load(1, 0).get("potential_decode_blocks").asLong();
      assertEquals(200, n.post("/reservations/o-1/output_block", "{}").status());
      assertEquals(before + 1, n.load(1, 0).get("potential_decode_blocks").asLong());
      assertEquals(
          200,
          n.call("POST", "/reservations/o-1/output_block", null, null).status(),
          "an empty body is accepted");
      NodeHarness.Reply bad = n.post("/reservations/o-1/output_block", "{\"decay_fraction\":1.5}");
      assertEquals(400, bad.status());
      assertTrue(bad.error().contains("decay_fraction"));
      assertEquals(404, n.post("/reservations/nope/output_block", "{}").status());
    }
  }

  @Test
  void explicitReservationBooksAndValidates() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.post("/workers", Map.of("worker_id", 9, "block_size", 4));
      String explicit = "{\"selection_id\":\"e-1\",\"worker_id\":1,\"dp_rank\":0," + PROMPT + "}";
      NodeHarness.Reply r = n.post("/reservations", explicit);
      assertEquals(201, r.status(), r.raw());
      assertEquals(1, r.body().get("worker_id").asLong());
      assertEquals("http://worker-1:8000", r.body().get("endpoint").asText());
      assertEquals(4, n.load(1, 0).get("potential_prefill_tokens").asLong());
      assertEquals(200, n.post("/reservations/e-1/prefill_complete", "").status());
      assertEquals(0, n.load(1, 0).get("potential_prefill_tokens").asLong());
      assertEquals(1, n.load(1, 0).get("active_requests").asLong());
      assertEquals(
          200,
          n.post("/reservations/e-1/prefill_complete", "").status(),
          "repeat completion is fine");
      NodeHarness.Reply tooBig =
          n.post(
              "/reservations",
              "{\"selection_id\":\"e-2\",\"worker_id\":1,\"sequence_hashes\":[1],\"isl_tokens\":4,\"effective_prefill_tokens\":5}");
      assertEquals(400, tooBig.status());
      assertTrue(tooBig.error().contains("must not exceed isl_tokens"), tooBig.raw());
      NodeHarness.Reply incomplete =
          n.post("/reservations", "{\"selection_id\":\"e-3\",\"worker_id\":9," + PROMPT + "}");
      assertEquals(404, incomplete.status());
      NodeHarness.Reply hashOnly =
          n.post(
              "/reservations",
              "{\"selection_id\":\"e-4\",\"worker_id\":1,\"sequence_hashes\":[1,2],\"isl_tokens\":8,\"effective_prefill_tokens\":3}");
      assertEquals(201, hashOnly.status(), hashOnly.raw());
      assertEquals(3, n.load(1, 0).get("potential_prefill_tokens").asLong());
      assertEquals(409, n.post("/reservations", explicit).status());
    }
  }

  @Test
  void cachedReplayIsSingleUseAndIgnoresRequestOverrides() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      NodeHarness.Reply sel = n.post("/select", "{\"selection_id\":\"sel-1\"," + PROMPT + "}");
      NodeHarness.Reply r =
          n.post(
              "/reservations",
              "{\"selection_id\":\"sel-1\",\"effective_prefill_tokens\":5,"
                  + "\"token_ids\":[7,7,7,7,7,7,7,7]}");
      assertEquals(201, r.status(), r.raw());
      assertEquals(sel.body().get("worker_id"), r.body().get("worker_id"));
      assertEquals(sel.body().get("dp_rank"), r.body().get("dp_rank"));
      assertEquals(4, n.load(1, 0).get("potential_prefill_tokens").asLong());
      assertEquals(200, n.post("/reservations/sel-1/prefill_complete", "").status());
      NodeHarness.Reply again = n.post("/reservations", "{\"selection_id\":\"sel-1\"}");
      assertEquals(404, again.status());
      NodeHarness.Reply never = n.post("/reservations", "{\"selection_id\":\"never\"}");
      assertEquals(404, never.status());
      assertTrue(never.error().contains("no pending selection"));
    }
  }

  @Test
  void replayWithWrongModelKeepsTheEntry() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.post("/select", "{\"selection_id\":\"m-1\"," + PROMPT + "}");
      assertEquals(
          404,
          n.post("/reservations", "{\"selection_id\":\"m-1\",\"model_name\":\"other\"}").status());
      assertEquals(201, n.post("/reservations", "{\"selection_id\":\"m-1\"}").status());
    }
  }

  @Test
  void failedReplayIsRetryable() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.post("/select", "{\"selection_id\":\"t-1\"," + PROMPT + "}");
      assertEquals(200, n.delete("/workers/1").status());
      assertEquals(503, n.post("/reservations", "{\"selection_id\":\"t-1\"}").status());
      n.worker(1);
      assertEquals(201, n.post("/reservations", "{\"selection_id\":\"t-1\"}").status());
    }
  }

  @Test
  void explicitBookingDiscardsTheCachedSelection() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.post("/select", "{\"selection_id\":\"x-1\"," + PROMPT + "}");
      assertEquals(
          201,
          n.post("/reservations", "{\"selection_id\":\"x-1\",\"worker_id\":1," + PROMPT + "}")
              .status());
      assertEquals(200, n.delete("/reservations/x-1").status());
      assertEquals(404, n.post("/reservations", "{\"selection_id\":\"x-1\"}").status());
    }
  }

  @Test
  void prefillTrackingConfigIsHonouredAndSelectOverrideReplayed() throws Exception {
    try (NodeHarness n =
        new NodeHarness(
            Map.of(
                "DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_TRACK_PREFILL_TOKENS", "false"))) {
      n.worker(1);
      n.post("/select", "{\"selection_id\":\"p-1\"," + PROMPT + "}");
      assertEquals(201, n.post("/reservations", "{\"selection_id\":\"p-1\"}").status());
      assertEquals(0, n.load(1, 0).get("potential_prefill_tokens").asLong());
      // another prompt: approximate mode indexed the first booking, which would make PROMPT fully
      // cached
      n.post(
          "/select",
          "{\"selection_id\":\"p-2\",\"router_config_override\":{\"track_prefill_tokens\":true},"
              + "\"token_ids\":[5,6,7,8]}");
      assertEquals(201, n.post("/reservations", "{\"selection_id\":\"p-2\"}").status());
      assertEquals(4, n.load(1, 0).get("potential_prefill_tokens").asLong());
    }
  }

  @Test
  void pendingCacheIsBoundedOldestFirst() throws Exception {
    try (NodeHarness n = NodeHarness.approximate("--selection-cache-max-entries", "1")) {
      n.worker(1);
      n.post("/select", "{\"selection_id\":\"a\"," + PROMPT + "}");
      n.post("/select", "{\"selection_id\":\"b\"," + PROMPT + "}");
      assertEquals(404, n.post("/reservations", "{\"selection_id\":\"a\"}").status());
      assertEquals(201, n.post("/reservations", "{\"selection_id\":\"b\"}").status());
    }
  }

  @Test
  void deletingAWorkerFreesItsReservations() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.post("/select_and_reserve", "{\"selection_id\":\"d-1\"," + PROMPT + "}");
      assertEquals(1, n.node.service().bookingCount());
      n.delete("/workers/1");
      assertEquals(0, n.node.service().bookingCount());
      assertEquals(404, n.delete("/reservations/d-1").status());
    }
  }

  @Test
  void sessionAffinityPinsAndStructuredContextWins() throws Exception {
    try (NodeHarness n = NodeHarness.approximate("--session-affinity-ttl-secs", "600")) {
      n.worker(1);
      n.worker(2);
      String ctx =
          "\"session_id\":\"flat\",\"session_context\":{\"session_id\":\"S\",\"input_trigger\":\"tool_result\","
              + "\"agent_headers\":{\"x-agent\":[\"sub\"]}}";
      long bound =
          n.post(
                  "/select_and_reserve",
                  "{\"selection_id\":\"s1\"," + ctx + ",\"token_ids\":[1,2,3,4,5,6,7,8]}")
              .body()
              .get("worker_id")
              .asLong();
      for (int i = 0; i < 10; i++) {
        assertEquals(
            bound,
            n.post("/select", "{\"session_id\":\"S\",\"token_ids\":[9,9,9,9]}")
                .body()
                .get("worker_id")
                .asLong(),
            "a bound session is pinned even to the more loaded worker");
        assertEquals(
            3 - bound,
            n.post("/select", "{\"session_id\":\"flat\",\"token_ids\":[9,9,9,9]}")
                .body()
                .get("worker_id")
                .asLong(),
            "the flat id lost to session_context and was never bound");
      }
      assertEquals(
          3 - bound,
          n.post(
                  "/select",
                  "{\"session_id\":\"S\",\"pinned_worker\":{\"worker_id\":"
                      + (3 - bound)
                      + ",\"dp_rank\":0},\"token_ids\":[9,9,9,9]}")
              .body()
              .get("worker_id")
              .asLong(),
          "pinned_worker wins over the session");
      n.delete("/workers/" + bound);
      n.worker(bound);
      assertEquals(
          200,
          n.post("/select_and_reserve", "{\"session_id\":\"S\",\"token_ids\":[9,9,9,9]}").status());
      String longId = "x".repeat(257);
      assertEquals(
          400,
          n.post("/select", "{\"session_id\":\"" + longId + "\",\"token_ids\":[1,2,3,4]}")
              .status());
    }
  }
}
