package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/engines.md} is consistent with the engines and with kvselect: each engine command's
 * {@code --kv-events-config} uses only the engine's config fields, publishes with ZMQ on a bound
 * endpoint; each registration next to it matches it (block size, ranks, each rank's port =
 * endpoint port + rank, replay port) and is accepted by a live node as a schedulable worker.
 */
class EnginesDocTest {

  static final Path DOC = Path.of("docs/engines.md");

  /** vLLM's KVEventsConfig fields; SGLang's are the same without enable_kv_cache_events. */
  static final Set<String> VLLM_FIELDS =
      Set.of(
          "enable_kv_cache_events",
          "publisher",
          "endpoint",
          "replay_endpoint",
          "buffer_steps",
          "hwm",
          "max_queue_size",
          "topic");

  record Engine(String name, JsonNode config, int blockSize, int dpSize) {}

  static final Pattern ENGINE =
      Pattern.compile("<!-- engine: ([a-z0-9-]+) -->\\s*```bash\\n(.*?)```", Pattern.DOTALL);
  static final Pattern WORKER =
      Pattern.compile("<!-- worker: ([a-z0-9-]+) -->\\s*```json\\n(.*?)```", Pattern.DOTALL);

  static Map<String, Engine> engines(String doc) throws Exception {
    Map<String, Engine> out = new LinkedHashMap<>();
    Matcher m = ENGINE.matcher(doc);
    while (m.find()) {
      String cmd = m.group(2).replace("\\\n", " ");
      Matcher cfg = Pattern.compile("--kv-events-config '([^']*)'").matcher(cmd);
      assertTrue(cfg.find(), m.group(1) + ": no --kv-events-config");
      Matcher block = Pattern.compile("--(?:block|page)-size (\\d+)").matcher(cmd);
      assertTrue(block.find(), m.group(1) + ": no --block-size / --page-size");
      Matcher dp = Pattern.compile("--data-parallel-size (\\d+)").matcher(cmd);
      out.put(
          m.group(1),
          new Engine(
              m.group(1),
              NodeHarness.JSON.readTree(cfg.group(1)),
              Integer.parseInt(block.group(1)),
              dp.find() ? Integer.parseInt(dp.group(1)) : 1));
    }
    return out;
  }

  static int port(String endpoint) {
    return URI.create(endpoint).getPort();
  }

  @Test
  void engineFlagsUseTheEnginesFieldsAndBindTheirSockets() throws Exception {
    Map<String, Engine> engines = engines(Files.readString(DOC));
    assertEquals(Set.of("vllm-single", "vllm-dp2", "sglang-single"), engines.keySet());
    for (Engine e : engines.values()) {
      JsonNode c = e.config();
      c.fieldNames()
          .forEachRemaining(
              f -> assertTrue(VLLM_FIELDS.contains(f), e.name() + ": unknown field " + f));
      assertEquals("zmq", c.path("publisher").asText(), e.name() + ": publisher");
      if (e.name().startsWith("vllm")) {
        assertTrue(
            c.path("enable_kv_cache_events").asBoolean(), e.name() + ": enable_kv_cache_events");
      } else {
        assertFalse(
            c.has("enable_kv_cache_events"), e.name() + ": SGLang has no enable_kv_cache_events");
      }
      // the engines bind only an endpoint with a wildcard; kvselect connects to it
      assertTrue(c.path("endpoint").asText().startsWith("tcp://*:"), e.name() + ": endpoint binds");
      if (c.has("replay_endpoint")) {
        assertTrue(
            c.path("replay_endpoint").asText().startsWith("tcp://*:"), e.name() + ": replay binds");
        int pub = port(c.path("endpoint").asText().replace("*", "h"));
        int replay = port(c.path("replay_endpoint").asText().replace("*", "h"));
        assertTrue(
            replay >= pub + e.dpSize() || replay + e.dpSize() <= pub,
            e.name() + ": rank ports overlap replay ports");
      }
    }
  }

  @Test
  void registrationsMatchTheirEnginesAndAreSchedulable() throws Exception {
    String doc = Files.readString(DOC);
    Map<String, Engine> engines = engines(doc);
    Matcher m = WORKER.matcher(doc);
    int seen = 0;
    try (NodeHarness node = new NodeHarness(Map.of())) {
      while (m.find()) {
        seen++;
        Engine e = engines.get(m.group(1));
        assertNotNull(e, "registration " + m.group(1) + " has no engine block");
        ObjectNode w = (ObjectNode) NodeHarness.JSON.readTree(m.group(2));
        assertEquals(
            e.blockSize(), w.path("block_size").asInt(), e.name() + ": block_size = engine block");
        assertEquals(
            e.dpSize(), w.path("data_parallel_size").asInt(1), e.name() + ": data_parallel_size");
        int pub = port(e.config().path("endpoint").asText().replace("*", "h"));
        Map<Integer, String> ranks = new LinkedHashMap<>();
        if (w.has("kv_events_endpoints")) {
          w.get("kv_events_endpoints")
              .fields()
              .forEachRemaining(
                  f -> ranks.put(Integer.parseInt(f.getKey()), f.getValue().asText()));
        } else {
          ranks.put(0, w.path("kv_events_endpoint").asText());
        }
        assertEquals(e.dpSize(), ranks.size(), e.name() + ": an endpoint per rank");
        ranks.forEach(
            (r, ep) -> assertEquals(pub + r, port(ep), e.name() + ": rank " + r + " port"));
        if (e.config().has("replay_endpoint")) {
          assertEquals(
              port(e.config().path("replay_endpoint").asText().replace("*", "h")),
              port(w.path("replay_endpoint").asText()),
              e.name() + ": replay port");
        } else {
          assertNull(w.get("replay_endpoint"), e.name() + ": no replay endpoint on the engine");
        }
        // the documented hosts are examples: the node subscribes on loopback instead
        String local = w.toString().replaceAll("10\\.0\\.0\\.\\d+", "127.0.0.1");
        NodeHarness.Reply r = node.post("/workers", local);
        assertEquals(201, r.status(), e.name() + ": " + r.raw());
        assertEquals("schedulable", r.body().path("lifecycle").asText(), e.name() + ": " + r.raw());
      }
    }
    assertEquals(3, seen);
  }
}
