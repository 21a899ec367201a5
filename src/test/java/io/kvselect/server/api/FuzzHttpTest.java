package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Mutated request bodies on every POST route: whatever arrives, the answer is a 2xx or a 4xx with
 * the error envelope (or 503 when nothing is eligible), never a 500, and the node keeps serving.
 * Every seed is itself accepted, and on every route the mutations reach both the accepting and
 * the rejecting paths, so the run exercises the decoders past their first error.
 */
class FuzzHttpTest {

  private static final List<String[]> SEEDS =
      List.of(
          new String[] {
            "/workers",
            "{\"worker_id\":5,\"endpoint\":\"http://w\",\"block_size\":4,\"data_parallel_size\":2,"
                + "\"kv_events_endpoints\":{\"0\":\"tcp://a:1\",\"1\":\"tcp://a:2\"},\"taints\":[\"x\"],\"total_kv_blocks\":9}"
          },
          new String[] {
            "/select",
            "{\"selection_id\":\"f\",\"token_ids\":[1,2,3,4,5,6,7,8],\"session_id\":\"s\","
                + "\"router_config_override\":{\"router_temperature\":0.5},\"allowed_worker_ids\":[1],\"advisory\":true}"
          },
          new String[] {
            "/select_and_reserve",
            "{\"block_hashes\":[1,2],\"sequence_hashes\":[3,4],\"isl_tokens\":8,"
                + "\"pinned_worker\":{\"worker_id\":1,\"dp_rank\":0},\"session_context\":{\"session_id\":\"c\"}}"
          },
          new String[] {
            "/reservations",
            "{\"selection_id\":\"g%ROUND%\",\"worker_id\":1,\"dp_rank\":0,\"token_ids\":[1,2,3,4],"
                + "\"effective_prefill_tokens\":2,\"track_prefill_tokens\":true}"
          },
          new String[] {
            "/potential_loads",
            "{\"token_ids\":[1,2,3,4],\"mm_routing_info\":{\"routing_token_ids\":[5,6,7,8],"
                + "\"block_mm_infos\":[{\"mm_objects\":[{\"mm_hash\":7}]}]}}"
          },
          new String[] {
            "/overlap_scores", "{\"token_ids\":[1,2,3,4],\"lora_name\":\"a\",\"cache_salt\":\"b\"}"
          },
          new String[] {"/reservations/g/output_block", "{\"decay_fraction\":0.5}"});

  /** Stands for the round number in a seed whose id must be fresh each round to be accepted. */
  private static final String ROUND = "%ROUND%";

  private static final String[] JUNK = {
    "",
    "null",
    "-1",
    "1e999",
    "18446744073709551616",
    "\"x\"",
    "[]",
    "{}",
    "[1,",
    "true",
    "\"\\u0000\"",
    "[[1]]",
    "{\"a\":{}}",
    "-0.5",
    "4294967295",
    "9223372036854775807"
  };

  @Test
  void mutatedBodiesNeverReach500() throws Exception {
    SplittableRandom rnd = new SplittableRandom(42);
    try (NodeHarness n = NodeHarness.approximate("--session-affinity-ttl-secs", "60")) {
      n.worker(1);
      for (String[] seed : SEEDS) {
        NodeHarness.Reply r = n.post(seed[0], seed[1].replace(ROUND, ""));
        assertTrue(
            r.status() >= 200 && r.status() < 300,
            "the unmutated seed is valid: " + seed[0] + " -> " + r.raw());
      }
      Map<String, int[]> outcomes = new LinkedHashMap<>();
      for (int round = 0; round < 60; round++) {
        for (String[] seed : SEEDS) {
          String body = mutate(seed[1].replace(ROUND, "-" + round), rnd);
          NodeHarness.Reply r = n.post(seed[0], body);
          assertTrue(
              r.status() < 500 || r.status() == 503,
              seed[0] + " " + body + " -> " + r.status() + " " + r.raw());
          if (r.status() >= 400) {
            assertTrue(r.error() != null && !r.error().isBlank(), "error envelope: " + r.raw());
          } else {
            assertNotNull(r.body(), "a JSON answer: " + r.raw());
          }
          outcomes.computeIfAbsent(seed[0], k -> new int[2])[r.status() < 400 ? 0 : 1]++;
        }
      }
      for (String[] seed : SEEDS) {
        int[] o = outcomes.get(seed[0]);
        assertTrue(
            o[0] > 0 && o[1] > 0,
            seed[0]
                + ": the mutations reach both the accepting and the rejecting paths ("
                + o[0]
                + " accepted, "
                + o[1]
                + " rejected)");
      }
      assertEquals(200, n.get("/health").status());
      assertEquals(200, n.get("/dump").status());
      assertEquals(200, n.get("/loads").status());
      NodeHarness.Reply after =
          n.post(SEEDS.get(1)[0], SEEDS.get(1)[1].replace("\"f\"", "\"after\""));
      assertEquals(200, after.status(), "the node still selects after the fuzz: " + after.raw());
      assertEquals(1, after.body().get("worker_id").asLong());
    }
  }

  /** Replaces one JSON value with junk, drops a slice, or duplicates a slice. */
  private static String mutate(String s, SplittableRandom rnd) {
    switch (rnd.nextInt(4)) {
      case 0 -> {
        int colon = s.indexOf(':', rnd.nextInt(s.length()));
        if (colon < 0) {
          return s;
        }
        int end = colon + 1;
        int depth = 0;
        while (end < s.length()) {
          char c = s.charAt(end);
          if (c == '[' || c == '{') {
            depth++;
          } else if (c == ']' || c == '}') {
            if (depth == 0) {
              break;
            }
            depth--;
          } else if (c == ',' && depth == 0) {
            break;
          }
          end++;
        }
        return s.substring(0, colon + 1) + JUNK[rnd.nextInt(JUNK.length)] + s.substring(end);
      }
      case 1 -> {
        int a = rnd.nextInt(s.length());
        int b = Math.min(s.length(), a + 1 + rnd.nextInt(6));
        return s.substring(0, a) + s.substring(b);
      }
      case 2 -> {
        int a = rnd.nextInt(s.length());
        int b = Math.min(s.length(), a + 1 + rnd.nextInt(10));
        return s.substring(0, b) + s.substring(a, b) + s.substring(b);
      }
      default -> {
        return s;
      }
    }
  }
}
