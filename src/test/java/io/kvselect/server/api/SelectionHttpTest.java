package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Selection over real HTTP (Dynamo tests 3, 4, 16, 17, 20, 23 and the selection options). */
class SelectionHttpTest {

  @Test
  void selectEchoesAndDoesNotBook() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      NodeHarness.Reply r = n.post("/select", "{\"selection_id\":\"s-1\",\"token_ids\":[1,2,3,4]}");
      assertEquals(200, r.status(), r.raw());
      JsonNode b = r.body();
      assertEquals("s-1", b.get("selection_id").asText());
      assertEquals("default", b.get("routing_group").asText());
      assertEquals("default", b.get("model_name").asText());
      assertNull(b.get("tenant_id"));
      assertEquals(1, b.get("worker_id").asLong());
      assertEquals(0, b.get("dp_rank").asInt());
      assertEquals("http://worker-1:8000", b.get("endpoint").asText());
      assertEquals(4, b.get("block_size").asInt());
      assertEquals(4, b.get("effective_prefill_tokens").asLong());
      assertEquals(0, b.get("overlap").get("longest_matched").asLong());
      assertEquals(0, b.get("overlap").get("dp").get("0").asLong());
      assertNull(b.get("cached_tokens"));
      assertNull(b.get("effective_overlap_blocks"));
      assertNull(b.get("sequence_hashes"));
      assertNull(b.get("isl_tokens"));
      assertNull(b.get("track_prefill_tokens"));
      assertNull(b.get("decode_busy"));
      assertEquals(0, n.load(1, 0).get("active_requests").asInt());
      NodeHarness.Reply noId = n.post("/select", "{\"token_ids\":[1,2,3,4]}");
      assertNull(noId.body().get("selection_id"));
    }
  }

  @Test
  void overlapScoresListsEverySchedulableRankSorted() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(2, "data_parallel_start_rank", 2, "data_parallel_size", 2);
      n.worker(1);
      NodeHarness.Reply r = n.post("/overlap_scores", "{\"token_ids\":[1,2,3,4]}");
      assertEquals(200, r.status(), r.raw());
      JsonNode ws = r.body().get("workers");
      assertEquals(3, ws.size());
      long[][] want = {{1, 0}, {2, 2}, {2, 3}};
      for (int i = 0; i < 3; i++) {
        assertEquals(want[i][0], ws.get(i).get("worker_id").asLong());
        assertEquals(want[i][1], ws.get(i).get("dp_rank").asLong());
        assertEquals(0, ws.get(i).get("host_pinned_blocks").asInt());
        assertEquals(0, ws.get(i).get("disk_blocks").asInt());
      }
      assertEquals(1, r.body().get("num_blocks").asInt());
      assertEquals(4, r.body().get("block_size").asInt());
      assertEquals(false, r.body().get("shared_cache").get("enabled").asBoolean());
    }
  }

  @Test
  void approximateModeRecordsBookingsButNotQueries() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.worker(2);
      String prompt = "\"token_ids\":[1,2,3,4,5,6,7,8,9,10,11,12]";
      n.post("/select", "{" + prompt + "}");
      for (JsonNode w : n.post("/overlap_scores", "{" + prompt + "}").body().get("workers")) {
        assertEquals(0, w.get("device_blocks").asInt(), "a query-only select is never recorded");
      }
      NodeHarness.Reply booked =
          n.post(
              "/select_and_reserve",
              "{\"pinned_worker\":{\"worker_id\":2,\"dp_rank\":0}," + prompt + "}");
      assertEquals(2, booked.body().get("worker_id").asLong());
      JsonNode ws = n.post("/overlap_scores", "{" + prompt + "}").body().get("workers");
      assertEquals(0, ws.get(0).get("device_blocks").asInt());
      assertEquals(3, ws.get(1).get("device_blocks").asInt());
      assertEquals(3.0, ws.get(1).get("router_credit_blocks").asDouble());
      NodeHarness.Reply again = n.post("/select", "{\"allowed_worker_ids\":[2]," + prompt + "}");
      assertEquals(12, again.body().get("overlap").get("gpu").asLong());
      assertEquals(12, again.body().get("overlap").get("longest_matched").asLong());
      assertEquals(0, again.body().get("effective_prefill_tokens").asLong());
    }
  }

  @Test
  void tokenHashesMatchDynamoGoldenVector() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.post("/workers", Map.of("worker_id", 1, "endpoint", "http://w", "block_size", 16));
      StringBuilder t = new StringBuilder();
      for (int i = 0; i < 32; i++) {
        t.append(i == 0 ? "" : ",").append(i);
      }
      NodeHarness.Reply r = n.post("/select_and_reserve", "{\"token_ids\":[" + t + "]}");
      assertEquals(200, r.status(), r.raw());
      assertEquals(-3136036677815684470L, r.body().get("sequence_hashes").get(0).asLong());
      assertEquals(-4677586368451018952L, r.body().get("sequence_hashes").get(1).asLong());
      assertEquals(32, r.body().get("isl_tokens").asLong());
      assertTrue(r.body().get("track_prefill_tokens").asBoolean());
      assertNotNull(r.body().get("selection_id"), "a generated selection id is returned");
    }
  }

  @Test
  void promptNormalizationRoutingTokensLoraAndSalt() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      String base = hashesOf(n, "{\"token_ids\":[1,2,3,4]}");
      assertEquals(
          base,
          hashesOf(
              n,
              "{\"token_ids\":[9,9,9,9],\"mm_routing_info\":{\"routing_token_ids\":[1,2,3,4]}}"));
      String lora = hashesOf(n, "{\"token_ids\":[1,2,3,4],\"lora_name\":\"adapter-a\"}");
      String salt = hashesOf(n, "{\"token_ids\":[1,2,3,4],\"cache_salt\":\"tenant-a\"}");
      assertNotEquals(base, lora);
      assertNotEquals(base, salt);
      assertNotEquals(lora, salt);
      assertEquals(
          base, hashesOf(n, "{\"token_ids\":[1,2,3,4],\"lora_name\":\"\",\"cache_salt\":\"\"}"));
      assertEquals(
          base,
          hashesOf(n, "{\"token_ids\":[1,2,3,4,5]}"),
          "the trailing partial block is not hashed");
    }
  }

  private static String hashesOf(NodeHarness n, String body) throws Exception {
    NodeHarness.Reply r = n.post("/select_and_reserve", body);
    assertEquals(200, r.status(), r.raw());
    n.delete("/reservations/" + r.body().get("selection_id").asText());
    return r.body().get("sequence_hashes").toString();
  }

  @Test
  void precomputedHashesAreTrustedAndValidated() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      NodeHarness.Reply ok =
          n.post(
              "/select_and_reserve",
              "{\"block_hashes\":[11,12],\"sequence_hashes\":[-21,22],\"isl_tokens\":8}");
      assertEquals(200, ok.status(), ok.raw());
      assertEquals(-21, ok.body().get("sequence_hashes").get(0).asLong());
      assertEquals(8, ok.body().get("isl_tokens").asLong());
      assertEquals(
          400,
          n.post("/select", "{\"block_hashes\":[11],\"sequence_hashes\":[21,22],\"isl_tokens\":8}")
              .status());
      assertEquals(
          400,
          n.post("/select", "{\"block_hashes\":[11],\"sequence_hashes\":[21],\"isl_tokens\":0}")
              .status());
      assertEquals(400, n.post("/select", "{}").status());
    }
  }

  @Test
  void pinnedAllowedAndFilteredWorkers() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1, "taints", List.of("gpu-a"));
      n.worker(2);
      for (int i = 0; i < 10; i++) {
        assertEquals(
            2,
            n.post("/select", "{\"token_ids\":[1,2,3,4],\"allowed_worker_ids\":[2]}")
                .body()
                .get("worker_id")
                .asLong());
        assertEquals(
            1,
            n.post(
                    "/select",
                    "{\"token_ids\":[1,2,3,4],\"routing_constraints\":{\"required_taints\":[\"gpu-a\"]}}")
                .body()
                .get("worker_id")
                .asLong());
        assertEquals(
            1,
            n.post(
                    "/select",
                    "{\"token_ids\":[1,2,3,4],\"pinned_worker\":{\"worker_id\":1,\"dp_rank\":0}}")
                .body()
                .get("worker_id")
                .asLong());
      }
      NodeHarness.Reply none =
          n.post("/select", "{\"token_ids\":[1,2,3,4],\"allowed_worker_ids\":[99]}");
      assertEquals(503, none.status());
      assertEquals(
          404,
          n.post(
                  "/select",
                  "{\"token_ids\":[1,2,3,4],\"pinned_worker\":{\"worker_id\":5,\"dp_rank\":0}}")
              .status());
    }
  }

  @Test
  void tiesAreBrokenAtRandomAndLoadSpreadsWork() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      n.worker(2);
      Set<Long> seen = new HashSet<>();
      for (int i = 0; i < 40; i++) {
        seen.add(n.post("/select", "{\"token_ids\":[1,2,3,4]}").body().get("worker_id").asLong());
      }
      assertEquals(Set.of(1L, 2L), seen, "equal costs must not always pick the same worker");
      long first =
          n.post("/select_and_reserve", "{\"token_ids\":[5,6,7,8,9,10,11,12]}")
              .body()
              .get("worker_id")
              .asLong();
      for (int i = 0; i < 10; i++) {
        assertNotEquals(
            first,
            n.post("/select", "{\"token_ids\":[100,101,102,103]}").body().get("worker_id").asLong(),
            "the loaded worker costs more for an unrelated prompt");
      }
    }
  }

  @Test
  void advisorySelectReportsWorkerLoadAndBusyFlags() throws Exception {
    try (NodeHarness n =
        new NodeHarness(
            Map.of(
                "DYN_ROUTER_USE_KV_EVENTS",
                "false",
                "DYN_ROUTER_CONDITIONAL_DISAGG_PREFILL_BUSY_THRESHOLD",
                "0.5",
                "DYN_ROUTER_CONDITIONAL_DISAGG_DECODE_BUSY_THRESHOLD",
                "0.5"))) {
      n.worker(1, "max_num_batched_tokens", 6, "total_kv_blocks", 2);
      NodeHarness.Reply r = n.post("/select", "{\"token_ids\":[1,2,3,4],\"advisory\":true}");
      JsonNode wl = r.body().get("worker_load");
      assertEquals(4, wl.get("active_prefill_tokens").asLong());
      assertEquals(6, wl.get("prefill_token_capacity").asLong());
      assertEquals(2, wl.get("total_kv_blocks").asLong());
      assertTrue(wl.get("prefill_busy").asBoolean());
      assertEquals(false, r.body().get("decode_busy").asBoolean());
      assertNull(n.post("/select", "{\"token_ids\":[1,2,3,4]}").body().get("worker_load"));
      assertNull(
          n.post("/select_and_reserve", "{\"token_ids\":[1,2,3,4],\"advisory\":true}")
              .body()
              .get("worker_load"));
      assertTrue(
          n.post("/select", "{\"token_ids\":[1,2,3,4,5,6,7,8,9,10,11,12]}")
              .body()
              .get("decode_busy")
              .asBoolean());
    }
  }

  @Test
  void potentialLoadsProjectThePrompt() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(1);
      NodeHarness.Reply r = n.post("/potential_loads", "{\"token_ids\":[1,2,3,4,5,6,7,8]}");
      assertEquals(200, r.status(), r.raw());
      assertEquals(8, r.body().get(0).get("potential_prefill_tokens").asLong());
      assertEquals(2, r.body().get(0).get("potential_decode_blocks").asLong());
      assertEquals(0, r.body().get(0).get("active_requests").asLong());
      NodeHarness.Reply off =
          n.post(
              "/potential_loads",
              "{\"token_ids\":[1,2,3,4,5,6,7,8],\"router_config_override\":{\"track_prefill_tokens\":false}}");
      assertEquals(0, off.body().get(0).get("potential_prefill_tokens").asLong());
    }
  }

  @Test
  void noKvHintWhenTheLongerPrefixIsOnlyABookingPrediction() throws Exception {
    // a hint names the source engine's own block hashes; a prefix known only from a predicted
    // booking has none (KvHintExternalHashesTest covers hints from published events)
    try (NodeHarness n = new NodeHarness(Map.of("DYN_ROUTER_PREDICTED_TTL_SECS", "60"))) {
      for (long id = 1; id <= 2; id++) {
        n.worker(
            id,
            "router_hint_worker_type",
            "decode",
            "router_hint_source_control_endpoints",
            Map.of("0", "tcp://worker-" + id + ":5600"));
      }
      String prompt = "\"token_ids\":[1,2,3,4,5,6,7,8]";
      NodeHarness.Reply a =
          n.post(
              "/select_and_reserve",
              "{\"selection_id\":\"a\",\"pinned_worker\":{\"worker_id\":1,\"dp_rank\":0},"
                  + prompt
                  + "}");
      assertNull(a.body().get("kv_hint"));
      NodeHarness.Reply b =
          n.post(
              "/select_and_reserve",
              "{\"selection_id\":\"b\",\"pinned_worker\":{\"worker_id\":2,\"dp_rank\":0},"
                  + prompt
                  + "}");
      assertEquals(200, b.status(), b.raw());
      JsonNode scores = n.post("/overlap_scores", "{" + prompt + "}").body().get("workers");
      assertEquals(1, scores.get(0).get("worker_id").asLong());
      assertEquals(
          2,
          scores.get(0).get("device_blocks").asLong(),
          "the prediction credits worker 1's prefix");
      assertNull(b.body().get("kv_hint"), b.raw());
    }
  }
}
