package io.kvselect.core.events;

import static io.kvselect.core.events.Payloads.H1;
import static io.kvselect.core.events.Payloads.H2;
import static io.kvselect.core.events.Payloads.hex;
import static io.kvselect.core.events.Payloads.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The test vectors of kv_events_wire.md §4, byte for byte, every decoded field asserted. */
class KvEventDecoderGoldenTest {

  private static final String V41_STORED =
      "93cb41d954fc402000009198ab426c6f636b53746f72656492cfdab89baa7b5857c0cf3b76f40347536421c0dc0020"
          + "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a3475055c000";
  private static final String V41_REMOVED =
      "93cb41d954fc402000009193ac426c6f636b52656d6f76656491cf3b76f40347536421a347505500";
  private static final String V41_CLEARED =
      "93cb41d954fc402000009191b0416c6c426c6f636b73436c656172656400";
  private static final String V42_STORED =
      "93cb41d954fc40200000918ba474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657392cfdab8"
          + "9baa7b5857c0cf3b76f40347536421b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473"
          + "dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20aa626c6f636b5f7369"
          + "7a6510a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c0aa65787472615f6b6579"
          + "7392c0c0a967726f75705f69647800b26b765f63616368655f737065635f6b696e64ae66756c6c5f61747465"
          + "6e74696f6e00";
  private static final String V42_REMOVED =
      "93cb41d954fc402000009184a474797065ac426c6f636b52656d6f766564ac626c6f636b5f68617368657391cf3b"
          + "76f40347536421a66d656469756da3475055a967726f75705f6964780000";
  private static final String V42_CLEARED =
      "93cb41d954fc402000009181a474797065b0416c6c426c6f636b73436c656172656400";
  private static final String V43_ARRAY =
      "93cb41d954fc402000009197ab426c6f636b53746f72656491d3cf97adeedb59e05bc0940102030404c0a347505500";
  private static final String V43_MAP =
      "93cb41d954fc402000009187a474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657391d3cf97"
          + "adeedb59e05bb1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f6964739401020304aa626c6f"
          + "636b5f73697a6504a76c6f72615f6964c0a66d656469756da347505500";
  private static final long SGLANG_HASH = -3488128144981237669L;

  static KvEvent single(byte[] payload, int expectedLength) throws MalformedEventException {
    assertEquals(expectedLength, payload.length, "vector length");
    KvEventBatch b = KvEventDecoder.decode(payload);
    assertEquals(1700000000.5, b.timestamp());
    assertEquals(Integer.valueOf(0), b.dpRank());
    assertEquals(1, b.events().size());
    return b.events().get(0);
  }

  static void assertTwoBlockStore(BlockStored s) {
    assertArrayEquals(new long[] {H1, H2}, s.blockHashes());
    assertEquals("15760518052499183552", Long.toUnsignedString(s.blockHashes()[0]));
    assertFalse(s.hasParent());
    assertEquals(0L, s.parentHash());
    assertArrayEquals(range(1, 32), s.tokenIds());
    assertEquals(16, s.blockSize());
    assertEquals("GPU", s.medium());
    assertNull(s.loraName());
    assertNull(s.cacheSalt());
    assertNull(s.mmHashes());
    assertNull(s.locality());
    assertFalse(s.eagle());
  }

  @Test
  void vllmArrayBlockStored() throws Exception {
    BlockStored s = assertInstanceOf(BlockStored.class, single(hex(V41_STORED), 87));
    assertTwoBlockStore(s);
    assertNull(s.groupIdx());
    assertNull(s.kvCacheSpecKind());
  }

  @Test
  void vllmArrayBlockRemoved() throws Exception {
    BlockRemoved r = assertInstanceOf(BlockRemoved.class, single(hex(V41_REMOVED), 40));
    assertArrayEquals(new long[] {H2}, r.blockHashes());
    assertEquals("GPU", r.medium());
    assertNull(r.groupIdx());
    assertNull(r.locality());
    assertNull(r.kvCacheSpecKind());
  }

  @Test
  void vllmArrayAllBlocksCleared() throws Exception {
    assertInstanceOf(AllBlocksCleared.class, single(hex(V41_CLEARED), 30));
  }

  @Test
  void vllmMapBlockStored() throws Exception {
    BlockStored s = assertInstanceOf(BlockStored.class, single(hex(V42_STORED), 228));
    assertTwoBlockStore(s);
    assertEquals(Integer.valueOf(0), s.groupIdx());
    assertEquals("full_attention", s.kvCacheSpecKind());
  }

  @Test
  void vllmMapBlockRemoved() throws Exception {
    BlockRemoved r = assertInstanceOf(BlockRemoved.class, single(hex(V42_REMOVED), 76));
    assertArrayEquals(new long[] {H2}, r.blockHashes());
    assertEquals("GPU", r.medium());
    assertEquals(Integer.valueOf(0), r.groupIdx());
    assertNull(r.locality());
    assertNull(r.kvCacheSpecKind());
  }

  @Test
  void vllmMapAllBlocksCleared() throws Exception {
    assertInstanceOf(AllBlocksCleared.class, single(hex(V42_CLEARED), 35));
  }

  @Test
  void sglangArrayBlockStored() throws Exception {
    assertSglangPage(assertInstanceOf(BlockStored.class, single(hex(V43_ARRAY), 47)));
  }

  @Test
  void sglangMapBlockStored() throws Exception {
    assertSglangPage(assertInstanceOf(BlockStored.class, single(hex(V43_MAP), 119)));
  }

  private static void assertSglangPage(BlockStored s) {
    assertArrayEquals(new long[] {SGLANG_HASH}, s.blockHashes());
    assertEquals(0xcf97adeedb59e05bL, s.blockHashes()[0]);
    assertFalse(s.hasParent());
    assertArrayEquals(new int[] {1, 2, 3, 4}, s.tokenIds());
    assertEquals(4, s.blockSize());
    assertEquals("GPU", s.medium());
    assertNull(s.loraName());
    assertNull(s.cacheSalt());
    assertNull(s.mmHashes());
    assertNull(s.groupIdx());
    assertNull(s.kvCacheSpecKind());
    assertNull(s.locality());
    assertFalse(s.eagle());
  }
}
