package io.kvselect.tools.mock;

import static io.kvselect.tools.mock.MockClient.generate;
import static io.kvselect.tools.mock.MockClient.longs;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Replay over a JeroMQ DEALER (kv_events_wire.md 1.6 and 4.4), in both answer layouts. */
class ReplayTest {

  static final byte[] END = {-1, -1, -1, -1, -1, -1, -1, -1};

  static MockerOptions options(ReplayLayout layout) {
    return new MockerOptions(
        1,
        1,
        64,
        4,
        WireFormat.MAP,
        "127.0.0.1",
        0,
        null,
        new TimingModel(0, 0, 1),
        null,
        null,
        1,
        "kv-events",
        layout,
        null);
  }

  static byte[] seq(long s) {
    return ByteBuffer.allocate(8).putLong(s).array();
  }

  /** Every frame of one multipart message; fails after 5 seconds. */
  static List<byte[]> recvMsg(ZMQ.Socket s) {
    List<byte[]> frames = new ArrayList<>();
    s.setReceiveTimeOut(5_000);
    do {
      byte[] f = s.recv();
      assertNotNull(f, "no replay answer within 5 s");
      frames.add(f);
    } while (s.hasReceiveMore());
    return frames;
  }

  @ParameterizedTest
  @EnumSource(ReplayLayout.class)
  void dealerGetsBufferedBatchesFromTheStartSeqThenTheEndMarker(ReplayLayout layout)
      throws Exception {
    try (MockFleet fleet = MockFleet.start(options(layout));
        ZContext ctx = new ZContext()) {
      EngineInfo e = fleet.engines().get(0);
      int[][] prompts = new int[3][];
      for (int i = 0; i < 3; i++) {
        prompts[i] = IntStream.range(i * 100, i * 100 + 4).toArray();
        generate(e, Map.of("token_ids", prompts[i]));
      }
      MockClient.awaitLastSeq(e, 0, 2L);
      ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
      dealer.setHandshakeIvl(1_000);
      dealer.connect(e.replayEndpoint());

      dealer.send(new byte[0], ZMQ.SNDMORE);
      dealer.send(new byte[] {1, 2, 3}, ZMQ.SNDMORE);
      dealer.send(new byte[] {4}, 0); // malformed: ignored without an answer
      dealer.send(new byte[0], ZMQ.SNDMORE);
      dealer.send(seq(1), 0);
      boolean topic = layout == ReplayLayout.TOPIC;
      for (long s = 1; s <= 2; s++) {
        List<byte[]> m = recvMsg(dealer);
        assertEquals(topic ? 4 : 3, m.size());
        assertEquals(0, m.get(0).length);
        if (topic) {
          assertEquals("kv-events", new String(m.get(1), StandardCharsets.UTF_8));
        }
        assertArrayEquals(seq(s), m.get(m.size() - 2));
        Map<?, ?> stored =
            (Map<?, ?>)
                ((List<?>) ((List<?>) MockClient.decode(m.get(m.size() - 1))).get(1)).get(0);
        assertEquals(
            longs(
                new MockEngine(1, 8, 4, options(layout).timing())
                    .chain(new MockEngine.Prompt(prompts[(int) s], null, null))),
            stored.get("block_hashes"));
      }
      assertEnd(recvMsg(dealer), topic);

      dealer.send(new byte[0], ZMQ.SNDMORE);
      dealer.send(seq(7), 0);
      assertEnd(recvMsg(dealer), topic);
    }
  }

  private static void assertEnd(List<byte[]> m, boolean topic) {
    assertEquals(topic ? 4 : 3, m.size());
    assertEquals(0, m.get(0).length);
    if (topic) {
      assertEquals(0, m.get(1).length);
    }
    assertArrayEquals(END, m.get(m.size() - 2));
    assertEquals(0, m.get(m.size() - 1).length);
  }
}
