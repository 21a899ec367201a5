package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The kvc policy over real HTTP: the {@code kvc} block, the built-in Admit, metrics, validation. */
class KvcHttpTest {

  static String tokens(int n) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 1; i <= n; i++) {
      b.append(i == 1 ? "" : ",").append(i);
    }
    return b.append(']').toString();
  }

  static NodeHarness kvcNode() throws Exception {
    NodeHarness n =
        new NodeHarness(
            Map.of(
                "DYN_ROUTER_USE_KV_EVENTS",
                "false",
                "KVSELECT_ROUTER_POLICY",
                "kvc",
                "KVSELECT_KVC_EPSILON",
                "2"));
    assertEquals(201, n.worker(1, "worker_type", "prefill").status());
    n.worker(2, "worker_type", "decode", "kv_capacity_tokens", 100);
    n.worker(3, "router_hint_worker_type", "decode", "total_kv_blocks", 25);
    return n;
  }

  static JsonNode reserve(NodeHarness n, String session, int tokens) throws Exception {
    NodeHarness.Reply r =
        n.post(
            "/select_and_reserve",
            "{\"session_id\":\"" + session + "\",\"token_ids\":" + tokens(tokens) + "}");
    assertEquals(200, r.status(), r.raw());
    return r.body();
  }

  @Test
  void thePolicyFlagSelectsKvcAndOverridesTheEnvironment() throws Exception {
    try (NodeHarness n =
        new NodeHarness(
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "KVSELECT_ROUTER_POLICY", "round_robin"),
            "--policy",
            "kvc")) {
      n.worker(1, "worker_type", "prefill");
      n.worker(2, "worker_type", "decode", "kv_capacity_tokens", 100);
      assertEquals("kvc", n.get("/config").body().get("router").get("policy").asText());
      JsonNode seed = reserve(n, "a", 40);
      assertEquals("seed", seed.get("kvc").get("mode").asText(), seed.toString());
    }
  }

  @Test
  void seedThenDirectThenReseedWhenTheLiteralAccountingRunsOutOfRoom() throws Exception {
    try (NodeHarness n = kvcNode()) {
      JsonNode seed = reserve(n, "a", 40);
      JsonNode k = seed.get("kvc");
      assertEquals("seed", k.get("mode").asText(), seed.toString());
      assertEquals(1, k.get("prefill_worker").get("worker_id").asLong());
      assertEquals(0, k.get("prefill_worker").get("dp_rank").asInt());
      assertEquals("http://worker-1:8000", k.get("prefill_worker").get("endpoint").asText());
      assertEquals(40, k.get("append_tokens").asLong());
      assertEquals(0, k.get("attempts").size());
      long home = seed.get("worker_id").asLong();
      assertTrue(home == 2 || home == 3, "a decode worker: " + home);
      assertEquals(
          1, n.load(home, 0).get("active_requests").asInt(), "booked on the decode worker");
      assertEquals(
          2, n.delete("/reservations/" + seed.get("selection_id").asText()).status() / 100);

      JsonNode direct = reserve(n, "a", 48);
      assertEquals("direct", direct.get("kvc").get("mode").asText(), direct.toString());
      assertEquals(home, direct.get("worker_id").asLong());
      assertEquals(8, direct.get("kvc").get("append_tokens").asLong(), "only the new tokens");
      assertNull(direct.get("kvc").get("prefill_worker"));
      n.delete("/reservations/" + direct.get("selection_id").asText());

      JsonNode moved = reserve(n, "a", 60);
      JsonNode mk = moved.get("kvc");
      assertEquals("reseed", mk.get("mode").asText(), moved.toString());
      assertNotEquals(
          home, moved.get("worker_id").asLong(), "literal: 48 resident + 60 > 0.95 * 100");
      assertEquals(1, mk.get("attempts").size());
      assertEquals(home, mk.get("attempts").get(0).get("worker_id").asLong());
      assertEquals("no-d-capacity", mk.get("attempts").get(0).get("reason").asText());

      String metrics = n.get("/metrics").raw();
      assertTrue(metrics.contains("kvselect_kvc_requests_total{mode=\"seed\"} 1.0"), metrics);
      assertTrue(metrics.contains("kvselect_kvc_requests_total{mode=\"direct\"} 1.0"), metrics);
      assertTrue(metrics.contains("kvselect_kvc_requests_total{mode=\"reseed\"} 1.0"), metrics);
      assertTrue(
          metrics.contains("kvselect_kvc_rejects_total{reason=\"no-d-capacity\"} 1.0"), metrics);
      assertTrue(metrics.contains("kvselect_kvc_migrations_total 1.0"), metrics);
      assertTrue(metrics.contains("kvselect_kvc_blacklist_entries_total 0.0"), metrics);
    }
  }

  @Test
  void aRequestMayChooseThePolicyAndABadOneIsRefusedNamingTheField() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      n.worker(2, "worker_type", "decode");
      n.worker(3, "worker_type", "decode");
      NodeHarness.Reply plain =
          n.post("/select_and_reserve", "{\"session_id\":\"s\",\"token_ids\":[1,2,3,4]}");
      assertNull(plain.body().get("kvc"), "kv by default: no kvc block");
      NodeHarness.Reply k =
          n.post(
              "/select_and_reserve",
              "{\"session_id\":\"t\",\"token_ids\":[1,2,3,4],"
                  + "\"router_config_override\":{\"policy\":\"kvc\"}}");
      assertEquals(200, k.status(), k.raw());
      assertEquals("seed", k.body().get("kvc").get("mode").asText());
      assertNull(k.body().get("kvc").get("prefill_worker"), "no prefill worker in the partition");
      int before = n.get("/loads").raw().length();
      NodeHarness.Reply bad =
          n.post(
              "/select_and_reserve",
              "{\"session_id\":\"t\",\"token_ids\":[1,2,3,4],"
                  + "\"router_config_override\":{\"policy\":\"fastest\"}}");
      assertEquals(400, bad.status(), bad.raw());
      assertTrue(bad.error().contains("router_config_override.policy"), bad.error());
      assertEquals(before, n.get("/loads").raw().length(), "a refused request books nothing");
      NodeHarness.Reply rr =
          n.post(
              "/select",
              "{\"token_ids\":[1,2,3,4],"
                  + "\"router_config_override\":{\"policy\":\"round_robin\"}}");
      assertEquals(200, rr.status(), rr.raw());
    }
  }

  @Test
  void workerRoleFieldsAreValidatedAndEchoed() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      NodeHarness.Reply bad = n.worker(4, "worker_type", "both");
      assertEquals(422, bad.status(), bad.raw());
      assertTrue(bad.error().contains("worker_type"), bad.error());
      NodeHarness.Reply badCap = n.worker(4, "kv_capacity_tokens", 0);
      assertEquals(422, badCap.status(), badCap.raw());
      assertTrue(badCap.error().contains("kv_capacity_tokens"), badCap.error());
      NodeHarness.Reply badEp = n.worker(4, "admission_endpoint", "tcp://x:1");
      assertEquals(422, badEp.status(), badEp.raw());
      assertTrue(badEp.error().contains("admission_endpoint"), badEp.error());
      NodeHarness.Reply ok =
          n.worker(
              4,
              "worker_type",
              "decode",
              "kv_capacity_tokens",
              92104,
              "admission_endpoint",
              "http://127.0.0.1:9/admit");
      assertEquals(201, ok.status(), ok.raw());
      JsonNode w = n.get("/workers").body().get(0);
      assertEquals("decode", w.get("worker_type").asText(), w.toString());
      assertEquals(92104, w.get("kv_capacity_tokens").asLong());
      assertEquals("http://127.0.0.1:9/admit", w.get("admission_endpoint").asText());
    }
  }
}
