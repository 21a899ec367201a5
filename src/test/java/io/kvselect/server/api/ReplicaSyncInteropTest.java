package io.kvselect.server.api;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.server.sync.replica.ReplicaSync;
import io.kvselect.server.sync.replica.ReplicaWire;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Interop with an independent replica peer on libzmq ({@code src/test/resources/interop/replica_peer.py},
 * Debian's python3-zmq and python3-msgpack) that builds Dynamo-shaped messages itself: kvselect
 * applies what the peer publishes (and drops, counting them, what it must not apply), and every
 * message kvselect publishes has exactly the keys of Dynamo's types. Fails, never skips, when
 * {@code /usr/bin/python3} cannot import zmq and msgpack.
 */
class ReplicaSyncInteropTest {

  private static final String PYTHON = "/usr/bin/python3";
  private static final Duration WAIT = Duration.ofSeconds(20);

  /** The peer's router id, above 2^63 so it travels as a msgpack uint64. */
  private static final String PEER_ROUTER = "18000000000000000001";

  private NodeHarness node;
  private Process proc;
  private Thread reader;
  private File stderr;
  private final BlockingQueue<String> sent = new LinkedBlockingQueue<>();
  private final List<String> received = new CopyOnWriteArrayList<>();
  private int commands;

  @BeforeEach
  void start() throws Exception {
    requirePythonZmq();
    node =
        NodeHarness.approximate("--session-affinity-ttl-secs", "600", "--replica-sync-port", "0");
    node.worker(1);
    node.worker(2);
    Path script = Path.of(getClass().getResource("/interop/replica_peer.py").toURI());
    stderr = Files.createTempFile("kvselect-replica-peer", ".log").toFile();
    proc =
        new ProcessBuilder(
                PYTHON,
                script.toString(),
                "--connect",
                "tcp://127.0.0.1:" + node.node.replicaSync().port())
            .redirectError(stderr)
            .start();
    BlockingQueue<String> pubLine = new LinkedBlockingQueue<>();
    reader = new Thread(() -> readLines(pubLine), "replica-peer-stdout");
    reader.start();
    String pub = pubLine.poll(20, TimeUnit.SECONDS);
    if (pub == null) {
      fail("peer printed no PUB line: " + Files.readString(stderr.toPath()));
    }
    assertEquals(
        201,
        node.post(
                "/replica_sync/register_peer",
                "{\"endpoint\":\"tcp://127.0.0.1:" + pub.substring(4).trim() + "\"}")
            .status());
  }

  @AfterEach
  void stop() throws Exception {
    try {
      if (proc != null) {
        try {
          proc.getOutputStream().close();
        } catch (IOException ignored) {
          // already gone
        }
        proc.destroy();
        if (!proc.waitFor(5, TimeUnit.SECONDS)) {
          proc.destroyForcibly();
          proc.waitFor(5, TimeUnit.SECONDS);
        }
      }
      if (reader != null) {
        reader.join(5_000);
      }
      if (stderr != null) {
        Files.deleteIfExists(stderr.toPath());
      }
    } finally {
      if (node != null) {
        node.close();
      }
    }
  }

  @Test
  void kvselectAppliesWhatADynamoShapedPeerPublishesAndDropsWhatItMustNot() throws Exception {
    ReplicaSync rs = node.node.replicaSync();
    AtomicInteger probe = new AtomicInteger();
    // past the PUB/SUB slow-joiner window: probes until one is applied (then freed)
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(100))
        .conditionEvaluationListener(
            LinkDiagnostics.onTimeout(
                () ->
                    LinkDiagnostics.describe("node", rs)
                        + "; peer alive "
                        + proc.isAlive()
                        + ", commands sent "
                        + commands
                        + ", peer stderr: "
                        + peerStderr()))
        .until(
            () -> {
              String id = "probe-" + probe.incrementAndGet();
              send("add " + id + " 2 0 " + PEER_ROUTER + " 4 8");
              send("free " + id + " 2 0 " + PEER_ROUTER + " 4");
              return rs.count("in", ReplicaWire.SEQUENCE_TOPIC, "applied") > 0;
            });
    await().atMost(WAIT).until(() -> node.load(2, 0).get("active_requests").asLong() == 0);

    send("add peer-1 1 0 " + PEER_ROUTER + " 4 12");
    await().atMost(WAIT).until(() -> node.load(1, 0).get("active_requests").asLong() == 1);
    assertEquals(12, node.load(1, 0).get("potential_prefill_tokens").asLong());
    send("done peer-1 1 0 " + PEER_ROUTER + " 4");
    await().atMost(WAIT).until(() -> node.load(1, 0).get("potential_prefill_tokens").asLong() == 0);
    assertEquals(
        1, node.load(1, 0).get("active_requests").asLong(), "blocks stay active after prefill");
    send("free peer-1 1 0 " + PEER_ROUTER + " 4");
    await().atMost(WAIT).until(() -> node.load(1, 0).get("active_requests").asLong() == 0);

    String seq = ReplicaWire.SEQUENCE_TOPIC;
    long legacy = rs.count("in", seq, "legacy_tenant_id");
    long malformed = rs.count("in", seq, "malformed");
    long unknown = rs.count("in", seq, "unknown_partition");
    long mismatch = rs.count("in", seq, "block_size_mismatch");
    long unregistered = rs.count("in", seq, "unregistered_worker");
    long own = rs.count("in", seq, "own");
    send("legacy x-1 1 " + PEER_ROUTER);
    send("garbage");
    send("frames3");
    send("add x-2 1 0 " + PEER_ROUTER + " 4 8 absent-model");
    send("add x-3 1 0 " + PEER_ROUTER + " 16 8");
    send("add x-4 99 0 " + PEER_ROUTER + " 4 8");
    send("add x-5 1 0 " + Long.toUnsignedString(rs.routerId()) + " 4 8");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertEquals(legacy + 1, rs.count("in", seq, "legacy_tenant_id"));
              assertEquals(malformed + 2, rs.count("in", seq, "malformed"));
              assertEquals(unknown + 1, rs.count("in", seq, "unknown_partition"));
              assertEquals(mismatch + 1, rs.count("in", seq, "block_size_mismatch"));
              assertEquals(unregistered + 1, rs.count("in", seq, "unregistered_worker"));
              assertEquals(own + 1, rs.count("in", seq, "own"));
            });
    assertEquals(
        0, node.load(1, 0).get("active_requests").asLong(), "no dropped event was applied");
    assertEquals(200, node.get("/health").status());

    send("bind conv-9 2 0 1 " + PEER_ROUTER);
    await().atMost(WAIT).until(() -> rs.count("in", ReplicaWire.AFFINITY_TOPIC, "applied") == 1);
    for (int i = 0; i < 3; i++) {
      assertEquals(
          2,
          node.post("/select", "{\"session_id\":\"conv-9\",\"token_ids\":[1,2,3,4]}")
              .body()
              .get("worker_id")
              .asLong());
    }
    send("bind conv-9 1 0 1 5");
    await().atMost(WAIT).until(() -> rs.count("in", ReplicaWire.AFFINITY_TOPIC, "stale") == 1);
    assertEquals(
        2,
        node.post("/select", "{\"session_id\":\"conv-9\",\"token_ids\":[1,2,3,4]}")
            .body()
            .get("worker_id")
            .asLong(),
        "(1, 5) is older than (1, " + PEER_ROUTER + ")");
    send("bind conv-9 1 0 2 5");
    await().atMost(WAIT).until(() -> rs.count("in", ReplicaWire.AFFINITY_TOPIC, "applied") == 2);
    assertEquals(
        1,
        node.post("/select", "{\"session_id\":\"conv-9\",\"token_ids\":[1,2,3,4]}")
            .body()
            .get("worker_id")
            .asLong(),
        "sequence 2 is newer");
  }

  @Test
  void whatKvselectPublishesHasExactlyDynamosKeys() throws Exception {
    AtomicInteger probe = new AtomicInteger();
    await()
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(100))
        .conditionEvaluationListener(
            LinkDiagnostics.onTimeout(
                () ->
                    LinkDiagnostics.describe("node", node.node.replicaSync())
                        + "; peer alive "
                        + proc.isAlive()
                        + ", received "
                        + received.size()
                        + ", peer stderr: "
                        + peerStderr()))
        .until(
            () -> {
              String id = "probe-" + probe.incrementAndGet();
              node.post(
                  "/select_and_reserve",
                  "{\"selection_id\":\"" + id + "\",\"token_ids\":[9,9,9,9]}");
              node.delete("/reservations/" + id);
              return !received.isEmpty();
            });
    int from = received.size();
    NodeHarness.Reply r =
        node.post(
            "/select_and_reserve",
            "{\"selection_id\":\"k-1\",\"session_id\":\"conv-1\","
                + "\"token_ids\":[1,2,3,4,5,6,7,8],\"expected_output_tokens\":16}");
    assertEquals(200, r.status(), r.raw());
    long worker = r.body().get("worker_id").asLong();
    assertEquals(200, node.post("/reservations/k-1/prefill_complete", "{}").status());
    assertEquals(200, node.post("/reservations/k-1/output_block", "{}").status());
    assertEquals(200, node.delete("/reservations/k-1").status());

    List<JsonNode> k1 = new ArrayList<>();
    List<JsonNode> bindings = new ArrayList<>();
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              k1.clear();
              bindings.clear();
              for (String line : received.subList(from, received.size())) {
                String[] parts = line.split(" ", 2);
                JsonNode body = NodeHarness.JSON.readTree(parts[1]);
                if (parts[0].equals(ReplicaWire.AFFINITY_TOPIC)) {
                  bindings.add(body);
                } else if (body.get("event").get("request_id").asText().equals("k-1")) {
                  k1.add(body);
                }
              }
              assertEquals(
                  3,
                  k1.size(),
                  "add, prefill completed, free; output blocks are never sent: " + k1);
              assertEquals(1, bindings.size(), bindings.toString());
            });
    String router = Long.toUnsignedString(node.node.replicaSync().routerId());
    for (JsonNode m : k1) {
      assertEquals(Set.of("model_name", "routing_group", "block_size", "event"), keys(m));
      assertEquals("default", m.get("model_name").asText());
      assertEquals("default", m.get("routing_group").asText());
      assertEquals(4, m.get("block_size").asInt());
      JsonNode e = m.get("event");
      assertEquals(Set.of("request_id", "worker", "data", "router_id", "lora_name"), keys(e));
      assertEquals(Set.of("worker_id", "dp_rank"), keys(e.get("worker")));
      assertEquals(worker, e.get("worker").get("worker_id").asLong());
      assertEquals(0, e.get("worker").get("dp_rank").asInt());
      assertEquals(router, e.get("router_id").bigIntegerValue().toString());
      assertTrue(e.get("lora_name").isNull());
    }
    JsonNode add = k1.get(0).get("event").get("data");
    assertEquals(Set.of("AddRequest"), keys(add));
    JsonNode fields = add.get("AddRequest");
    assertEquals(
        Set.of(
            "token_sequence",
            "track_prefill_tokens",
            "expected_output_tokens",
            "prefill_load_hint"),
        keys(fields));
    // tokens 1..8 at block size 4: the public sequence hashes of the reference vectors
    assertEquals(
        "[14643705804678351452,4945711292740353085]", fields.get("token_sequence").toString());
    assertTrue(fields.get("track_prefill_tokens").asBoolean());
    assertEquals(16, fields.get("expected_output_tokens").asInt());
    assertEquals(
        Set.of("initial_effective_prefill_tokens", "expected_prefill_duration"),
        keys(fields.get("prefill_load_hint")));
    assertEquals(
        8, fields.get("prefill_load_hint").get("initial_effective_prefill_tokens").asInt());
    assertEquals("\"MarkPrefillCompleted\"", k1.get(1).get("event").get("data").toString());
    assertEquals("\"Free\"", k1.get(2).get("event").get("data").toString());

    JsonNode b = bindings.get(0);
    assertEquals(
        Set.of(
            "model_name",
            "routing_group",
            "session_id",
            "worker_id",
            "dp_rank",
            "sequence",
            "writer_id"),
        keys(b));
    assertEquals("conv-1", b.get("session_id").asText());
    assertEquals(worker, b.get("worker_id").asLong());
    assertEquals(1, b.get("sequence").asLong());
    assertEquals(router, b.get("writer_id").bigIntegerValue().toString());
  }

  private static Set<String> keys(JsonNode n) {
    assertNotNull(n);
    assertTrue(n.isObject(), "not a map: " + n);
    Set<String> out = new TreeSet<>();
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      out.add(it.next());
    }
    return new java.util.HashSet<>(out);
  }

  private String peerStderr() {
    try {
      return Files.readString(stderr.toPath());
    } catch (IOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }

  private void send(String command) throws Exception {
    OutputStream in = proc.getOutputStream();
    in.write((command + "\n").getBytes(StandardCharsets.UTF_8));
    in.flush();
    commands++;
    while (true) {
      String line = sent.poll(10, TimeUnit.SECONDS);
      if (line == null) {
        fail(
            "peer did not send '"
                + command
                + "' (alive="
                + proc.isAlive()
                + "): "
                + Files.readString(stderr.toPath()));
      }
      if (Integer.parseInt(line) == commands) {
        return;
      }
    }
  }

  private void readLines(BlockingQueue<String> pubLine) {
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        if (line.startsWith("PUB ")) {
          pubLine.add(line);
        } else if (line.startsWith("SENT ")) {
          sent.add(line.substring(5).trim());
        } else if (line.startsWith("RECV ")) {
          received.add(line.substring(5));
        }
      }
    } catch (IOException ignored) {
      // the process is gone
    }
  }

  private static void requirePythonZmq() throws Exception {
    Process check =
        new ProcessBuilder(PYTHON, "-c", "import zmq, msgpack").redirectErrorStream(true).start();
    boolean ended = check.waitFor(30, TimeUnit.SECONDS);
    String out = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!ended) {
      check.destroyForcibly();
    }
    if (!ended || check.exitValue() != 0) {
      fail(
          PYTHON
              + " cannot import zmq and msgpack; install Debian's packages with "
              + "'apt-get install -y python3-zmq python3-msgpack'. Output: "
              + out);
    }
  }
}
