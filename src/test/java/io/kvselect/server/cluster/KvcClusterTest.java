package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Three clustered nodes under {@code policy=kvc} share the KVC session state: a session's turns
 * sent to different nodes see one pin, rejects from several nodes add up to a blacklist,
 * reset-on-success on one node clears the counter the others read, and a migration decided on one
 * node is where the others send the session next.
 *
 * <p>Workers: 1 decode with 100 tokens of KV (admits up to 95 = rho * K_d), 2 decode with ample
 * KV, 3 prefill. No reservation is freed, so no node's built-in model holds resident KV and each
 * admission depends on the input alone (50 tokens fit worker 1, 200 do not). One probe per
 * dispatch ({@code kvc_epsilon 1}), blacklist at 2 rejects.
 */
class KvcClusterTest {

  private static ClusterHarness h;
  private static List<KvselectNode> nodes;

  @BeforeAll
  static void cluster() throws Exception {
    h = new ClusterHarness();
    Map<String, String> env = new LinkedHashMap<>(ClusterHarness.ENV);
    env.put("KVSELECT_ROUTER_POLICY", "kvc");
    env.put("KVSELECT_KVC_EPSILON", "1");
    env.put("KVSELECT_KVC_TAU_REJECT", "2");
    nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      nodes.add(
          h.start(
              NodeSettings.parse(
                  new String[] {
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--cluster",
                    "--cluster-name",
                    h.name,
                    "--cluster-members",
                    h.members(3),
                    "--cluster-port",
                    Integer.toString(h.basePort)
                  },
                  env)));
    }
    for (KvselectNode n : nodes) {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  n.cluster().state().equals("joined")
                      && h.get(n, "/cluster").body().path("members").size() == 3);
      worker(n, 1, "decode", 100);
      worker(n, 2, "decode", 1_000_000);
      worker(n, 3, "prefill", 1_000_000);
    }
  }

  private static void worker(KvselectNode n, long id, String type, long capacity) throws Exception {
    ClusterHarness.Reply r =
        h.post(
            n,
            "/workers",
            Map.of(
                "worker_id",
                id,
                "endpoint",
                "http://w" + id + ":8000",
                "block_size",
                16,
                "worker_type",
                type,
                "kv_capacity_tokens",
                capacity));
    assertTrue(r.status() / 100 == 2, "register worker " + id + ": " + r);
  }

  @AfterAll
  static void close() throws Exception {
    if (h != null) {
      h.close();
    }
  }

  private static int base = 1;

  /** Tokens never sent before, so no node's index holds an overlap that could steer Route. */
  private static List<Integer> fresh(int n) {
    List<Integer> t = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      t.add(base++);
    }
    return t;
  }

  /** One turn of {@code session} on node {@code i}; the reservation is kept. */
  private static JsonNode turn(int i, String session, int tokens, Long onlyWorker)
      throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("session_id", session);
    body.put("token_ids", fresh(tokens));
    if (onlyWorker != null) {
      body.put("allowed_worker_ids", List.of(onlyWorker));
    }
    ClusterHarness.Reply r = h.post(nodes.get(i), "/select_and_reserve", body);
    assertEquals(200, r.status(), r.toString());
    assertTrue(r.body().has("kvc"), r.toString());
    return r.body();
  }

  private static String mode(JsonNode b) {
    return b.get("kvc").get("mode").asText();
  }

  private static List<Long> probed(JsonNode b) {
    List<Long> ids = new ArrayList<>();
    b.get("kvc").get("attempts").forEach(a -> ids.add(a.get("worker_id").asLong()));
    return ids;
  }

  /** The session's shared entry as stored, read through a member of this cluster. */
  private static HazelcastKvcState.Session stored(String session) {
    HazelcastInstance hz =
        Hazelcast.getAllHazelcastInstances().stream()
            .filter(x -> x.getConfig().getClusterName().equals(h.name))
            .findFirst()
            .orElseThrow();
    IMap<String, HazelcastKvcState.Session> m = hz.getMap(HazelcastKvcState.SESSIONS_MAP);
    List<String> keys = m.keySet().stream().filter(k -> k.endsWith(session)).toList();
    assertEquals(1, keys.size(), "one entry for " + session + ": " + keys);
    return m.get(keys.get(0));
  }

  private static HazelcastKvcState.Rank w(long id) {
    return new HazelcastKvcState.Rank(id, 0);
  }

  @Test
  void rejectsFromTwoNodesBlacklistThePinAndTheMigrationHoldsOnTheThird() throws Exception {
    String s = "session-a";
    JsonNode t0 = turn(0, s, 50, 1L);
    assertEquals(1, t0.get("worker_id").asLong(), t0.toString());
    assertEquals("seed", mode(t0));

    JsonNode t1 = turn(1, s, 200, null);
    assertEquals("fallback", mode(t1), t1.toString());
    assertEquals(List.of(1L), probed(t1), "node 2 probes the pin node 1 set");
    assertEquals(Map.of(w(1), 1), stored(s).rejects());

    JsonNode t2 = turn(2, s, 200, null);
    assertEquals("fallback", mode(t2), t2.toString());
    assertEquals(List.of(1L), probed(t2));
    assertEquals(Map.of(w(1), 2), stored(s).rejects(), "rejects from two nodes add up");
    assertEquals(w(1), stored(s).pin(), "a Fallback keeps the pin");

    // 50 tokens fit worker 1, but the rejects of nodes 2 and 3 blacklist it for this session
    JsonNode t3 = turn(0, s, 50, null);
    assertEquals(2, t3.get("worker_id").asLong(), t3.toString());
    assertEquals("reseed", mode(t3));
    assertEquals(List.of(), probed(t3));
    assertEquals(w(2), stored(s).pin());

    for (int i : new int[] {1, 2}) {
      JsonNode next = turn(i, s, 50, null);
      assertEquals(
          2, next.get("worker_id").asLong(), "node " + (i + 1) + " follows the migration: " + next);
      assertEquals(List.of(), probed(next));
    }
    assertEquals(6, stored(s).turns(), "one turn count across the nodes");
  }

  @Test
  void resetOnSuccessOnOneNodeClearsTheCounterTheOthersRead() throws Exception {
    String s = "session-b";
    assertEquals(1, turn(0, s, 50, 1L).get("worker_id").asLong());
    assertEquals("fallback", mode(turn(1, s, 200, null)));
    assertEquals(Map.of(w(1), 1), stored(s).rejects());

    JsonNode ok = turn(2, s, 50, null);
    assertEquals(1, ok.get("worker_id").asLong(), ok.toString());
    assertEquals(Map.of(), stored(s).rejects(), "reset-on-success cleared worker 1's counter");

    assertEquals("fallback", mode(turn(0, s, 200, null)));
    assertEquals(Map.of(w(1), 1), stored(s).rejects());
    // without the reset this would be the second reject and worker 1 would be blacklisted
    JsonNode after = turn(1, s, 50, null);
    assertEquals(1, after.get("worker_id").asLong(), after.toString());
    assertEquals(List.of(), probed(after));
    assertEquals(w(1), stored(s).pin());
  }
}
