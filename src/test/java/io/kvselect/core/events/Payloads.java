package io.kvselect.core.events;

import java.io.IOException;
import java.util.HexFormat;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/** Test payload builders: hex literals and hand-packed msgpack. */
final class Payloads {

  /** Frame bytes of §4: ts = 1700000000.5 as float64. */
  static final String TS = "cb41d954fc40200000";

  static final long H1 = Long.parseUnsignedLong("15760518052499183552");
  static final long H2 = 4284880390408332321L;
  static final String H1_HEX = "cfdab89baa7b5857c0";
  static final String H2_HEX = "cf3b76f40347536421";

  /** array16(32) of fixints 1..32. */
  static final String TOKENS_1_32 =
      "dc0020" + "0102030405060708090a0b0c0d0e0f10" + "1112131415161718191a1b1c1d1e1f20";

  static final String TAG_STORED = "ab426c6f636b53746f726564";
  static final String TAG_REMOVED = "ac426c6f636b52656d6f766564";
  static final String GPU = "a3475055";
  static final String FULL_ATTENTION = "ae66756c6c5f617474656e74696f6e";

  interface Body {
    void write(MessagePacker p) throws IOException;
  }

  private Payloads() {}

  static byte[] hex(String... parts) {
    return HexFormat.of().parseHex(String.join("", parts));
  }

  static byte[] pack(Body body) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      body.write(p);
      p.flush();
      return p.toByteArray();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** {@code [1700000000.5, [event], 0]} around one hand-packed event. */
  static byte[] batchOf(Body event) {
    return pack(
        p -> {
          p.packArrayHeader(3).packDouble(1700000000.5).packArrayHeader(1);
          event.write(p);
          p.packInt(0);
        });
  }

  static void packTokens(MessagePacker p, int from, int toInclusive) throws IOException {
    p.packArrayHeader(toInclusive - from + 1);
    for (int t = from; t <= toInclusive; t++) {
      p.packInt(t);
    }
  }

  static int[] range(int from, int toInclusive) {
    return java.util.stream.IntStream.rangeClosed(from, toInclusive).toArray();
  }
}
