package io.kvselect.tools.mock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code --register} against a real kvselect node in this JVM, and the command line. */
class RegisterTest {

  static KvselectNode node() throws Exception {
    NodeSettings s =
        NodeSettings.parse(new String[] {"--host", "127.0.0.1", "--port", "0"}, Map.of());
    return KvselectNode.start(s, 1)
        .toCompletionStage()
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS);
  }

  @Test
  void registeredEnginesAreSchedulableWithTheirEndpoints() throws Exception {
    KvselectNode node = node();
    try {
      String url = "http://127.0.0.1:" + node.port();
      MockerMain cli = new MockerMain();
      MockerMain.commandLine(cli)
          .parseArgs(
              "--engines",
              "2",
              "--block-size",
              "8",
              "--num-gpu-blocks",
              "128",
              "--register",
              url,
              "--model-name",
              "m1",
              "--worker-id-base",
              "10",
              "--wire",
              "ARRAY");
      MockerOptions o = cli.options();
      assertEquals(WireFormat.ARRAY, o.wire());
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (MockFleet fleet =
          MockerMain.run(o, new PrintStream(out, true, StandardCharsets.UTF_8))) {
        String[] lines = out.toString(StandardCharsets.UTF_8).trim().split("\n");
        assertEquals(2, lines.length);
        Map<Long, JsonNode> printed = new HashMap<>();
        for (String l : lines) {
          JsonNode j = MockClient.JSON.readTree(l);
          printed.put(j.get("worker_id").asLong(), j);
        }
        JsonNode workers = MockClient.call("GET", url + "/workers", null).body();
        assertEquals(2, workers.size());
        for (JsonNode w : workers) {
          long id = w.get("worker_id").asLong();
          EngineInfo e = fleet.engines().get((int) id - 10);
          JsonNode line = printed.get(id);
          assertEquals("schedulable", w.get("lifecycle").asText(), w.toString());
          assertEquals("m1", w.get("model_name").asText());
          assertEquals(e.endpoint(), w.get("endpoint").asText());
          assertEquals(line.get("endpoint").asText(), e.endpoint());
          assertEquals(e.kvEventsEndpoint(0), w.get("kv_events_endpoints").get("0").asText());
          assertEquals(line.get("kv_events_endpoints").get("0").asText(), e.kvEventsEndpoint(0));
          assertEquals(e.replayEndpoint(), w.get("replay_endpoint").asText());
          assertEquals(line.get("replay_endpoint").asText(), e.replayEndpoint());
          assertEquals(8, w.get("block_size").asInt());
          assertEquals(128, w.get("total_kv_blocks").asInt());
          assertEquals(1, w.get("data_parallel_size").asInt());
          assertTrue(e.kvEventsEndpoint(0).startsWith("tcp://127.0.0.1:"));
        }
        assertEquals(200, MockClient.call("GET", url + "/ready", null).status());
      }
      assertEquals(
          0,
          MockClient.call("GET", url + "/workers", null).body().size(),
          "a closed fleet removed its workers from the node");
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void multiRankEnginesRegisterAnEndpointPerRankAndNoReplay() throws Exception {
    KvselectNode node = node();
    try {
      String url = "http://127.0.0.1:" + node.port();
      MockerOptions o =
          new MockerOptions(
              1,
              2,
              64,
              16,
              WireFormat.MAP,
              "127.0.0.1",
              0,
              url,
              new TimingModel(0, 0, 1),
              null,
              "g1",
              5,
              "",
              ReplayLayout.TOPIC,
              4096L);
      try (MockFleet fleet =
          MockerMain.run(
              o, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8))) {
        EngineInfo e = fleet.engines().get(0);
        JsonNode w = MockClient.call("GET", url + "/workers", null).body().get(0);
        assertEquals("schedulable", w.get("lifecycle").asText(), w.toString());
        assertEquals("g1", w.get("routing_group").asText());
        assertEquals(2, w.get("data_parallel_size").asInt());
        assertEquals(e.kvEventsEndpoint(1), w.get("kv_events_endpoints").get("1").asText());
        assertNull(w.get("replay_endpoint"));
        assertEquals(4096, w.get("max_num_batched_tokens").asInt());
      }
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void registrationFailureStopsTheFleetAndBadFlagsExit2() throws Exception {
    MockerOptions o = MockerOptions.local(1, 1, 8, 4, WireFormat.MAP);
    MockerOptions unreachable =
        new MockerOptions(
            1,
            1,
            8,
            4,
            WireFormat.MAP,
            "127.0.0.1",
            0,
            "http://127.0.0.1:1",
            o.timing(),
            null,
            null,
            1,
            "",
            ReplayLayout.TOPIC,
            null);
    try {
      MockerMain.run(
          unreachable, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
      throw new AssertionError("registration against a closed port must fail");
    } catch (java.io.IOException expected) {
      // the fleet was stopped again by run()
    }
    PrintStream err = System.err;
    try {
      System.setErr(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
      assertEquals(2, MockerMain.commandLine(new MockerMain()).execute("--engines", "0"));
      assertEquals(2, MockerMain.commandLine(new MockerMain()).execute("--wire", "json"));
      assertEquals(
          2,
          MockerMain.commandLine(new MockerMain())
              .execute("--base-port", "65530", "--engines", "4"));
    } finally {
      System.setErr(err);
    }
  }
}
