package io.kvselect.server.sync.replica;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.util.HexFormat;
import java.util.function.Consumer;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** {@link ReplicaWire}: Dynamo's named-field msgpack, byte for byte, and its refusals. */
class ReplicaWireTest {

  private static final long BIG = 0xF000_0000_0000_0001L;

  private static ReplicaWire.SequenceEvent add(long[] tokens) {
    return new ReplicaWire.SequenceEvent(
        "m", "g", 4, "r-1", BIG, 3, ReplicaWire.Kind.ADD_REQUEST, tokens, true, 16, 8L, BIG, null);
  }

  /** What rmp_serde's to_vec_named writes for a Free, built by hand in field order. */
  @Test
  void freeIsTheFourKeyEnvelopeWithTheVariantNameAsData() throws IOException {
    byte[] expected =
        pack(
            p -> {
              try {
                p.packMapHeader(4)
                    .packString("model_name")
                    .packString("m")
                    .packString("routing_group")
                    .packString("g")
                    .packString("block_size")
                    .packInt(4)
                    .packString("event")
                    .packMapHeader(5)
                    .packString("request_id")
                    .packString("r-1")
                    .packString("worker")
                    .packMapHeader(2)
                    .packString("worker_id")
                    .packInt(7)
                    .packString("dp_rank")
                    .packInt(0)
                    .packString("data")
                    .packString("Free")
                    .packString("router_id")
                    .packInt(9)
                    .packString("lora_name")
                    .packNil();
              } catch (IOException e) {
                throw new AssertionError(e);
              }
            });
    ReplicaWire.SequenceEvent free =
        new ReplicaWire.SequenceEvent(
            "m", "g", 4, "r-1", 7, 0, ReplicaWire.Kind.FREE, null, false, null, null, 9, null);
    assertEquals(
        HexFormat.of().formatHex(expected), HexFormat.of().formatHex(ReplicaWire.encode(free)));
  }

  @Test
  void unsignedValuesTravelAsUint64AndRoundTrip() throws Exception {
    long[] tokens = {-1L, 1L, Long.MIN_VALUE};
    byte[] bytes = ReplicaWire.encode(add(tokens));
    String hex = HexFormat.of().formatHex(bytes);
    assertEquals(true, hex.contains("cff000000000000001"), "router_id as uint64: " + hex);
    assertEquals(true, hex.contains("cfffffffffffffffff"), "u64::MAX as uint64: " + hex);
    ReplicaWire.SequenceEvent back = ReplicaWire.decodeSequence(bytes);
    assertArrayEquals(tokens, back.tokenSequence());
    assertEquals(BIG, back.routerId());
    assertEquals(BIG, back.workerId());
    assertEquals(3, back.dpRank());
    assertEquals(16, back.expectedOutputTokens());
    assertEquals(8L, back.prefillTokens());
    assertEquals(ReplicaWire.Kind.ADD_REQUEST, back.kind());
  }

  @Test
  void unitVariantAlsoAcceptedAsAOneKeyMapAndDefaultsApply() throws Exception {
    byte[] mapForm = envelope(p -> p.packMapHeader(1).packString("MarkPrefillCompleted").packNil());
    assertEquals(
        ReplicaWire.Kind.MARK_PREFILL_COMPLETED, ReplicaWire.decodeSequence(mapForm).kind());
    // track_prefill_tokens defaults to true and prefill_load_hint to none, as serde's defaults
    byte[] minimal =
        envelope(
            p ->
                p.packMapHeader(1)
                    .packString("AddRequest")
                    .packMapHeader(2)
                    .packString("token_sequence")
                    .packNil()
                    .packString("expected_output_tokens")
                    .packNil());
    ReplicaWire.SequenceEvent e = ReplicaWire.decodeSequence(minimal);
    assertEquals(true, e.trackPrefillTokens());
    assertNull(e.prefillTokens());
    assertNull(e.tokenSequence());
  }

  @Test
  void refusals() throws Exception {
    byte[] legacy =
        pack(
            p -> {
              try {
                p.packMapHeader(4)
                    .packString("model_name")
                    .packString("m")
                    .packString("tenant_id")
                    .packString("g")
                    .packString("block_size")
                    .packInt(4)
                    .packString("event")
                    .packNil();
              } catch (IOException x) {
                throw new AssertionError(x);
              }
            });
    assertEquals(
        "legacy_tenant_id",
        assertThrows(ReplicaWire.Rejected.class, () -> ReplicaWire.decodeSequence(legacy))
            .reason());
    // serde ignores an extra tenant_id beside routing_group
    byte[] both =
        pack(
            p -> {
              try {
                p.packMapHeader(5).packString("tenant_id").packString("t");
                p.writePayload(
                    java.util.Arrays.copyOfRange(
                        ReplicaWire.encode(add(null)), 1, ReplicaWire.encode(add(null)).length));
              } catch (IOException x) {
                throw new AssertionError(x);
              }
            });
    assertEquals("r-1", ReplicaWire.decodeSequence(both).requestId());
    byte[] good = ReplicaWire.encode(add(new long[] {1}));
    byte[] trailing = java.util.Arrays.copyOf(good, good.length + 1);
    byte[] truncated = java.util.Arrays.copyOf(good, good.length - 3);
    for (byte[] bad :
        new byte[][] {
          trailing,
          truncated,
          {(byte) 0xc1},
          envelope(p -> p.packString("Grow")),
          envelope(p -> p.packMapHeader(2).packString("Free").packNil().packString("x").packNil())
        }) {
      assertEquals(
          "malformed",
          assertThrows(ReplicaWire.Rejected.class, () -> ReplicaWire.decodeSequence(bad)).reason(),
          HexFormat.of().formatHex(bad));
    }
  }

  @Test
  void affinityBindingIsSevenFlatKeysAndRoundTrips() throws Exception {
    ReplicaWire.AffinityEvent e = new ReplicaWire.AffinityEvent("m", "g", "s", BIG, null, 2, BIG);
    ReplicaWire.AffinityEvent back = ReplicaWire.decodeAffinity(ReplicaWire.encode(e));
    assertEquals(e, back);
    assertEquals(7, MessagePack.newDefaultUnpacker(ReplicaWire.encode(e)).unpackMapHeader());
  }

  /**
   * Headers that declare more than the frame holds, and deep nesting, are refused before anything
   * is built: a random frame starting with an array32 header once took the test JVM's 2 GB heap.
   */
  @Test
  void declaredSizesBeyondTheFrameAndDeepNestingAreRefusedWithoutAllocating() {
    byte[] array32 = {(byte) 0xdd, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x00};
    byte[] map32 = {(byte) 0xdf, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x00, 0x00};
    byte[] nestedMap = {(byte) 0x81, (byte) 0xa1, 'k', (byte) 0xdd, 0x10, 0x00, 0x00, 0x00, 0x01};
    byte[] str32 = {(byte) 0xdb, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 'x'};
    byte[] bin32 = {(byte) 0xc6, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 'x'};
    byte[] deep = new byte[200_000];
    java.util.Arrays.fill(deep, (byte) 0x91);
    for (byte[] bad : new byte[][] {array32, map32, nestedMap, str32, bin32, deep}) {
      for (int topic = 0; topic < 2; topic++) {
        int t = topic;
        ReplicaWire.Rejected r =
            assertThrows(
                ReplicaWire.Rejected.class,
                () -> {
                  if (t == 0) {
                    ReplicaWire.decodeSequence(bad);
                  } else {
                    ReplicaWire.decodeAffinity(bad);
                  }
                },
                HexFormat.of().formatHex(bad, 0, Math.min(bad.length, 16)));
        assertEquals("malformed", r.reason());
      }
    }
  }

  @Property(tries = 300)
  void arbitraryBytesAreRefusedNeverThrown(@ForAll byte[] bytes) {
    for (int topic = 0; topic < 2; topic++) {
      try {
        if (topic == 0) {
          ReplicaWire.decodeSequence(bytes);
        } else {
          ReplicaWire.decodeAffinity(bytes);
        }
      } catch (ReplicaWire.Rejected expected) {
        // the only way to refuse
      }
    }
  }

  interface Writer {
    void write(MessageBufferPacker p) throws IOException;
  }

  /** A valid envelope whose {@code data} is written by {@code data}. */
  private static byte[] envelope(Writer data) {
    return pack(
        p -> {
          try {
            p.packMapHeader(4)
                .packString("model_name")
                .packString("m")
                .packString("routing_group")
                .packString("g")
                .packString("block_size")
                .packInt(4)
                .packString("event")
                .packMapHeader(4)
                .packString("request_id")
                .packString("r")
                .packString("worker")
                .packMapHeader(2)
                .packString("worker_id")
                .packInt(1)
                .packString("dp_rank")
                .packInt(0)
                .packString("data");
            data.write(p);
            p.packString("router_id").packInt(5);
          } catch (IOException e) {
            throw new AssertionError(e);
          }
        });
  }

  private static byte[] pack(Consumer<MessageBufferPacker> body) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      body.accept(p);
      return p.toByteArray();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
