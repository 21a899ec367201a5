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

import io.kvselect.testing.WireVectors;
import org.junit.jupiter.api.Test;

/** The test vectors of kv_events_wire.md §4, byte for byte, every decoded field asserted. */
class KvEventDecoderGoldenTest {

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
    BlockStored s = assertInstanceOf(BlockStored.class, single(hex(WireVectors.V41_STORED), 87));
    assertTwoBlockStore(s);
    assertNull(s.groupIdx());
    assertNull(s.kvCacheSpecKind());
  }

  @Test
  void vllmArrayBlockRemoved() throws Exception {
    BlockRemoved r = assertInstanceOf(BlockRemoved.class, single(hex(WireVectors.V41_REMOVED), 40));
    assertArrayEquals(new long[] {H2}, r.blockHashes());
    assertEquals("GPU", r.medium());
    assertNull(r.groupIdx());
    assertNull(r.locality());
    assertNull(r.kvCacheSpecKind());
  }

  @Test
  void vllmArrayAllBlocksCleared() throws Exception {
    assertInstanceOf(AllBlocksCleared.class, single(hex(WireVectors.V41_CLEARED), 30));
  }

  @Test
  void vllmMapBlockStored() throws Exception {
    BlockStored s = assertInstanceOf(BlockStored.class, single(hex(WireVectors.V42_STORED), 228));
    assertTwoBlockStore(s);
    assertEquals(Integer.valueOf(0), s.groupIdx());
    assertEquals("full_attention", s.kvCacheSpecKind());
  }

  @Test
  void vllmMapBlockRemoved() throws Exception {
    BlockRemoved r = assertInstanceOf(BlockRemoved.class, single(hex(WireVectors.V42_REMOVED), 76));
    assertArrayEquals(new long[] {H2}, r.blockHashes());
    assertEquals("GPU", r.medium());
    assertEquals(Integer.valueOf(0), r.groupIdx());
    assertNull(r.locality());
    assertNull(r.kvCacheSpecKind());
  }

  @Test
  void vllmMapAllBlocksCleared() throws Exception {
    assertInstanceOf(AllBlocksCleared.class, single(hex(WireVectors.V42_CLEARED), 35));
  }

  @Test
  void sglangArrayBlockStored() throws Exception {
    assertSglangPage(assertInstanceOf(BlockStored.class, single(hex(WireVectors.V43_ARRAY), 47)));
  }

  @Test
  void sglangMapBlockStored() throws Exception {
    assertSglangPage(assertInstanceOf(BlockStored.class, single(hex(WireVectors.V43_MAP), 119)));
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
