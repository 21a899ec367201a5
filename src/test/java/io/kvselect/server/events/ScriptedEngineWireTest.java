package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Checks the fake engine behind {@link LibzmqEngineInteropTest} against {@code kv_events_wire.md}:
 * its payloads equal the §4 test vectors byte for byte (vLLM arrays and 0.26 maps, SGLang arrays
 * and maps), its live messages are {@code [topic][seq 8 B BE][payload]} (§1.3) and its replay
 * replies and end marker have the §1.6 / §4.4 frames in the topic and the legacy layout. So the
 * node-level tests exercise the real layouts, not the engine's idea of them.
 */
class ScriptedEngineWireTest {

  private static final HexFormat HEX = HexFormat.of();
  private static final double TS = 1700000000.5;
  private static final String H1 = "15760518052499183552";
  private static final String H2 = "4284880390408332321";

  /** SGLang's hash of the page [1, 2, 3, 4] (−3488128144981237669 as int64), as an unsigned id. */
  private static final String SGLANG_PAGE = Long.toUnsignedString(-3488128144981237669L);

  private ScriptedEngine engine;

  @BeforeAll
  static void libzmqPythonIsInstalled() throws Exception {
    ScriptedEngine.requireLibzmqPython();
  }

  @AfterEach
  void stop() {
    if (engine != null) {
      engine.close();
    }
  }

  private static Map<String, Object> cmd(String op, String format, Object... kv) {
    Map<String, Object> m = new HashMap<>();
    m.put("op", op);
    m.put("format", format);
    m.put("ts", TS);
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  private static Map<String, Object> twoBlocks(String format) {
    return cmd(
        "store",
        format,
        "parent",
        null,
        "hashes",
        List.of(H1, H2),
        "tokens",
        IntStream.rangeClosed(1, 32).toArray(),
        "block_size",
        16);
  }

  private String encode(Map<String, Object> command) throws Exception {
    return engine.send(Map.of("op", "encode", "of", command)).get("hex").asText();
  }

  @Test
  void payloadsAreTheSpecVectors() throws Exception {
    engine = ScriptedEngine.start();
    // §4.1 vLLM array events
    assertEquals(
        "93cb41d954fc402000009198ab426c6f636b53746f72656492cfdab89baa7b5857c0cf3b76f40347536421c0"
            + "dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a3475055c000",
        encode(twoBlocks("vllm_array")));
    assertEquals(
        "93cb41d954fc402000009193ac426c6f636b52656d6f76656491cf3b76f40347536421a347505500",
        encode(cmd("remove", "vllm_array", "hashes", List.of(H2))));
    assertEquals(
        "93cb41d954fc402000009191b0416c6c426c6f636b73436c656172656400",
        encode(cmd("clear", "vllm_array")));
    // §4.2 vLLM 0.26 map events
    assertEquals(
        "93cb41d954fc40200000918ba474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573"
            + "92cfdab89baa7b5857c0cf3b76f40347536421b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473"
            + "dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20aa626c6f636b5f73697a6510"
            + "a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c0aa65787472615f6b65797392c0c0"
            + "a967726f75705f69647800b26b765f63616368655f737065635f6b696e64ae66756c6c5f617474656e74696f6e00",
        encode(twoBlocks("vllm_map")));
    assertEquals(
        "93cb41d954fc402000009184a474797065ac426c6f636b52656d6f766564ac626c6f636b5f686173686573"
            + "91cf3b76f40347536421a66d656469756da3475055a967726f75705f6964780000",
        encode(cmd("remove", "vllm_map", "hashes", List.of(H2))));
    assertEquals(
        "93cb41d954fc402000009181a474797065b0416c6c426c6f636b73436c656172656400",
        encode(cmd("clear", "vllm_map")));
    // §4.3 SGLang, one 4-token page, hash sent as a negative int64
    Map<String, Object> array =
        cmd(
            "store",
            "sglang_array",
            "parent",
            null,
            "hashes",
            List.of(SGLANG_PAGE),
            "tokens",
            List.of(1, 2, 3, 4),
            "block_size",
            4,
            "hash_repr",
            "negative_int");
    assertEquals(
        "93cb41d954fc402000009197ab426c6f636b53746f72656491d3cf97adeedb59e05bc0940102030404c0a347505500",
        encode(array));
    Map<String, Object> map = new HashMap<>(array);
    map.put("format", "sglang_map");
    assertEquals(
        "93cb41d954fc402000009187a474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573"
            + "91d3cf97adeedb59e05bb1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f6964739401020304"
            + "aa626c6f636b5f73697a6504a76c6f72615f6964c0a66d656469756da347505500",
        encode(map));
    // a bin32 hash is the 32-byte form whose last 8 bytes are the id
    Map<String, Object> bin =
        cmd("remove", "vllm_array", "hashes", List.of(H2), "hash_repr", "bin32");
    String hex = encode(bin);
    assertEquals("93cb41d954fc402000009193ac426c6f636b52656d6f76656491c420", hex.substring(0, 56));
    assertEquals("3b76f40347536421a347505500", hex.substring(56 + 48));
  }

  private static List<byte[]> receive(ZMQ.Socket s) {
    byte[] first = s.recv(0);
    assertNotNull(first, "no message within the receive timeout");
    List<byte[]> frames = new ArrayList<>(List.of(first));
    while (s.hasReceiveMore()) {
      frames.add(s.recv(0));
    }
    return frames;
  }

  /** A JeroMQ socket with the node's timers (its handshake timer recovers a stuck connect). */
  private static ZMQ.Socket socket(ZContext ctx, SocketType type) {
    ZMQ.Socket s = ctx.createSocket(type);
    s.setLinger(0);
    s.setReconnectIVL(KvEventIngestOptions.RECONNECT_IVL_MS);
    s.setHandshakeIvl(KvEventIngestOptions.HANDSHAKE_IVL_MS);
    return s;
  }

  private static byte[] seq(long n) {
    return ByteBuffer.allocate(8).putLong(n).array();
  }

  @ParameterizedTest(name = "{0} replies")
  @CsvSource({"topic", "legacy"})
  void liveAndReplayFramesFollowTheSpec(String layout) throws Exception {
    engine = ScriptedEngine.start("--replay-layout", layout, "--topic", "kv-events");
    byte[] topic = "kv-events".getBytes(StandardCharsets.UTF_8);
    try (ZContext ctx = new ZContext()) {
      ZMQ.Socket sub = socket(ctx, SocketType.SUB);
      sub.setReceiveTimeOut(50);
      sub.subscribe(new byte[0]);
      sub.connect(engine.pub);
      byte[] live = null;
      List<byte[]> frames = List.of();
      for (int i = 0; i < 200 && live == null; i++) {
        long s = engine.publish(cmd("clear", "vllm_map"));
        live = sub.recv(0);
        if (live != null) {
          frames = new ArrayList<>(List.of(live));
          while (sub.hasReceiveMore()) {
            frames.add(sub.recv(0));
          }
          assertArrayEquals(seq(s), frames.get(1), "live seq frame");
        }
      }
      assertNotNull(live, "the SUB never received a live batch");
      assertEquals(3, frames.size());
      assertArrayEquals(topic, frames.get(0));
      assertEquals(encode(cmd("clear", "vllm_map")), HEX.formatHex(frames.get(2)));
      long last = ByteBuffer.wrap(frames.get(1)).getLong();

      ZMQ.Socket dealer = socket(ctx, SocketType.DEALER);
      dealer.setReceiveTimeOut(5000);
      dealer.connect(engine.replay);
      dealer.sendMore(new byte[0]);
      dealer.send(seq(last));
      boolean withTopic = layout.equals("topic");
      List<byte[]> reply = receive(dealer);
      assertEquals(withTopic ? 4 : 3, reply.size(), "replayed batch frames");
      assertArrayEquals(new byte[0], reply.get(0));
      if (withTopic) {
        assertArrayEquals(topic, reply.get(1));
      }
      assertArrayEquals(seq(last), reply.get(reply.size() - 2));
      assertArrayEquals(frames.get(2), reply.get(reply.size() - 1));
      List<byte[]> end = receive(dealer);
      List<String> expectedEnd =
          withTopic ? List.of("", "", "ffffffffffffffff", "") : List.of("", "ffffffffffffffff", "");
      assertEquals(expectedEnd, end.stream().map(HEX::formatHex).toList(), "end marker");
    }
  }
}
