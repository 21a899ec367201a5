package io.kvselect.core.events;

import static io.kvselect.core.events.Payloads.FULL_ATTENTION;
import static io.kvselect.core.events.Payloads.GPU;
import static io.kvselect.core.events.Payloads.H1;
import static io.kvselect.core.events.Payloads.H1_HEX;
import static io.kvselect.core.events.Payloads.H2;
import static io.kvselect.core.events.Payloads.H2_HEX;
import static io.kvselect.core.events.Payloads.TAG_REMOVED;
import static io.kvselect.core.events.Payloads.TAG_STORED;
import static io.kvselect.core.events.Payloads.TOKENS_1_32;
import static io.kvselect.core.events.Payloads.TS;
import static io.kvselect.core.events.Payloads.batchOf;
import static io.kvselect.core.events.Payloads.hex;
import static io.kvselect.core.events.Payloads.pack;
import static io.kvselect.core.events.Payloads.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.hash.BlockHasher;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every historical layout of kv_events_wire.md §1.4 / §3, built from hex or hand-packed. */
class KvEventDecoderLayoutTest {

  /** BlockStored fields 1..5 of §4.1: two hashes, no parent, tokens 1..32, block size 16. */
  private static final String STORED_HEAD =
      TAG_STORED + "92" + H1_HEX + H2_HEX + "c0" + TOKENS_1_32 + "10";

  private static KvEventBatch decode(byte[] payload) throws MalformedEventException {
    return KvEventDecoder.decode(payload);
  }

  private static BlockStored onlyStored(KvEventBatch b) {
    assertEquals(1, b.events().size());
    BlockStored s = assertInstanceOf(BlockStored.class, b.events().get(0));
    assertArrayEquals(new long[] {H1, H2}, s.blockHashes());
    assertArrayEquals(range(1, 32), s.tokenIds());
    assertEquals(16, s.blockSize());
    return s;
  }

  @Test
  void vllm090SixElementStoreWithoutRank() throws Exception {
    KvEventBatch b = decode(hex("92", TS, "91", "96", STORED_HEAD, "c0"));
    assertNull(b.dpRank());
    BlockStored s = onlyStored(b);
    assertNull(s.medium());
    assertNull(s.loraName());
  }

  @Test
  void vllm090TwoElementRemoveWithoutRank() throws Exception {
    KvEventBatch b = decode(hex("92", TS, "91", "92", TAG_REMOVED, "91", H2_HEX));
    assertNull(b.dpRank());
    BlockRemoved r = assertInstanceOf(BlockRemoved.class, b.events().get(0));
    assertArrayEquals(new long[] {H2}, r.blockHashes());
    assertNull(r.medium());
  }

  @Test
  void sevenElementStoreWithMedium() throws Exception {
    BlockStored s = onlyStored(decode(hex("93", TS, "91", "97", STORED_HEAD, "c0", GPU, "05")));
    assertEquals("GPU", s.medium());
    assertEquals(5, decode(hex("93", TS, "91", "97", STORED_HEAD, "c0", GPU, "05")).dpRank());
  }

  @Test
  void nineElementStoreWithNilExtraKeys() throws Exception {
    BlockStored s =
        onlyStored(decode(hex("93", TS, "91", "99", STORED_HEAD, "c0", GPU, "c0", "92c0c0", "00")));
    assertNull(s.mmHashes());
    assertNull(s.groupIdx());
  }

  @Test
  void elevenElementStoreWithGroupAndKind() throws Exception {
    BlockStored s =
        onlyStored(
            decode(
                hex(
                    "93",
                    TS,
                    "91",
                    "9b",
                    STORED_HEAD,
                    "c0",
                    GPU,
                    "c0",
                    "92c0c0",
                    "00",
                    FULL_ATTENTION,
                    "00")));
    assertEquals(0, s.groupIdx());
    assertEquals("full_attention", s.kvCacheSpecKind());
  }

  @Test
  void longerTailsCarryWindowAndLocalityAndExtrasAreIgnored() throws Exception {
    String slidingWindow = "ae736c6964696e675f77696e646f77";
    String remote = "a652454d4f5445";
    String tail = "01" + slidingWindow + "cd0400" + remote + "a3667778" + "81a178c0" + "c0";
    BlockStored s =
        onlyStored(
            decode(
                hex("93", TS, "91", "dc0010", STORED_HEAD, "c0", GPU, "c0", "92c0c0", tail, "00")));
    assertEquals(1, s.groupIdx());
    assertEquals("sliding_window", s.kvCacheSpecKind());
    assertEquals("REMOTE", s.locality());
  }

  @Test
  void removedArrayTails() throws Exception {
    BlockRemoved r =
        assertInstanceOf(
            BlockRemoved.class,
            decode(hex("93", TS, "91", "94", TAG_REMOVED, "91", H2_HEX, GPU, "02", "00"))
                .events()
                .get(0));
    assertEquals(2, r.groupIdx());
    assertNull(r.locality());
    r =
        assertInstanceOf(
            BlockRemoved.class,
            decode(
                    hex(
                        "93",
                        TS,
                        "91",
                        "99",
                        TAG_REMOVED,
                        "91",
                        H2_HEX,
                        "a3435055",
                        "00",
                        FULL_ATTENTION,
                        "c0",
                        "a54c4f43414c",
                        "c0",
                        "c3",
                        "00"))
                .events()
                .get(0));
    assertEquals("CPU", r.medium());
    assertEquals("full_attention", r.kvCacheSpecKind());
    assertEquals("LOCAL", r.locality());
  }

  @Test
  void trailingMetadataOfAnotherTypeIsIgnored() throws Exception {
    BlockStored s =
        onlyStored(
            decode(
                hex(
                    "93",
                    TS,
                    "91",
                    "9d",
                    STORED_HEAD,
                    "c0",
                    GPU,
                    "c0",
                    "a1" + "78",
                    "a178",
                    "05",
                    "c3",
                    "07",
                    "00")));
    assertNull(s.mmHashes());
    assertNull(s.groupIdx());
    assertNull(s.kvCacheSpecKind());
    assertNull(s.locality());
  }

  @Test
  void envelopeVariants() throws Exception {
    String cleared = "91b0416c6c426c6f636b73436c6561726564";
    assertNull(decode(hex("93", TS, "91", cleared, "c0")).dpRank());
    KvEventBatch b = decode(hex("95", TS, "91", cleared, "07", "a178", "c0"));
    assertEquals(7, b.dpRank());
    assertEquals(1, b.events().size());
    assertEquals(3.0, decode(hex("92", "03", "90")).timestamp());
    assertEquals(-1, decode(hex("93", "ca3f800000", "90", "ff")).dpRank());
  }

  @Test
  void mapEnvelope() throws Exception {
    byte[] payload =
        pack(
            p -> {
              p.packMapHeader(4);
              p.packString("unknown").packArrayHeader(2).packNil().packString("x");
              p.packString("events")
                  .packArrayHeader(1)
                  .packArrayHeader(1)
                  .packString("AllBlocksCleared");
              p.packString("data_parallel_rank").packInt(3);
              p.packString("ts").packDouble(12.25);
            });
    KvEventBatch b = decode(payload);
    assertEquals(12.25, b.timestamp());
    assertEquals(3, b.dpRank());
    assertInstanceOf(AllBlocksCleared.class, b.events().get(0));
    KvEventBatch sg =
        decode(
            pack(
                p ->
                    p.packMapHeader(2)
                        .packString("attn_dp_rank")
                        .packNil()
                        .packString("events")
                        .packArrayHeader(0)));
    assertNull(sg.dpRank());
    assertTrue(sg.events().isEmpty());
  }

  @Test
  void mapEventWithUnknownKeysInAnyOrder() throws Exception {
    byte[] payload =
        batchOf(
            p -> {
              p.packMapHeader(12);
              p.packString("future_map")
                  .packMapHeader(1)
                  .packInt(1)
                  .packArrayHeader(1)
                  .packFloat(1.5f);
              p.packString("token_ids");
              Payloads.packTokens(p, 1, 32);
              p.packString("ownership").packString("shared");
              p.packString("block_hashes").packArrayHeader(2).packLong(H1).packLong(H2);
              p.packString("future_bin").packBinaryHeader(3).writePayload(new byte[] {1, 2, 3});
              p.packString("block_size").packInt(16);
              p.packString("session_id").packString("s-1");
              p.packString("parent_block_hash").packLong(-5L);
              p.packString("cache_salt").packString("tenant-a");
              p.packString("lora_name").packString("adapter-a");
              p.packString("locality").packString("LOCAL");
              p.packString("type").packString("BlockStored");
            });
    BlockStored s = onlyStored(decode(payload));
    assertTrue(s.hasParent());
    assertEquals(-5L, s.parentHash());
    assertEquals("tenant-a", s.cacheSalt());
    assertEquals("adapter-a", s.loraName());
    assertEquals("LOCAL", s.locality());
    assertNull(s.medium());
  }

  @Test
  void sglangMetadataMapCarriesCacheSalt() throws Exception {
    byte[] payload =
        hex(
            "93",
            TS,
            "91",
            "98",
            STORED_HEAD,
            "c0",
            GPU,
            "82",
            "aa63616368655f73616c74",
            "a874656e616e742d61",
            "aa73657373696f6e5f6964",
            "a131",
            "00");
    BlockStored s = onlyStored(decode(payload));
    assertEquals("tenant-a", s.cacheSalt());
    assertNull(s.loraName());
  }

  @ParameterizedTest
  @CsvSource({
    "cf7fffffffffffffff, 9223372036854775807",
    "cf8000000000000000, -9223372036854775808",
    "cfffffffffffffffff, -1",
    "d3cf97adeedb59e05b, -3488128144981237669",
    "d3ffffffffffffffff, -1",
    "d280000000, -2147483648",
    "d1fc18, -1000",
    "d0c8, -56",
    "e0, -32",
    "7f, 127",
    "cc80, 128",
    "cdffff, 65535",
    "ceffffffff, 4294967295",
    "c408aabbccddeeff0011, -6144092013047381999",
    "c41000000000000000000102030405060708, 72623859790382856",
  })
  void hashesOfEveryIntWidthAndBinKeepTheirBits(String hashHex, long expected) throws Exception {
    BlockRemoved r =
        assertInstanceOf(
            BlockRemoved.class,
            decode(hex("93", TS, "91", "92", TAG_REMOVED, "91", hashHex, "00")).events().get(0));
    assertEquals(expected, r.blockHashes()[0]);
  }

  @Test
  void thirtyTwoByteBinHashesUseTheLastEightBytes() throws Exception {
    byte[] digest = new byte[32];
    for (int i = 0; i < 32; i++) {
      digest[i] = (byte) (0xa0 + i);
    }
    byte[] payload =
        batchOf(
            p -> {
              p.packArrayHeader(8).packString("BlockStored");
              p.packArrayHeader(1).packBinaryHeader(32).writePayload(digest);
              p.packBinaryHeader(32).writePayload(digest);
              Payloads.packTokens(p, 1, 16);
              p.packInt(16).packNil().packString("GPU").packNil();
            });
    BlockStored s = assertInstanceOf(BlockStored.class, decode(payload).events().get(0));
    assertEquals(0xb8b9babbbcbdbebfL, s.blockHashes()[0]);
    assertTrue(s.hasParent());
    assertEquals(0xb8b9babbbcbdbebfL, s.parentHash());
  }

  @Test
  void eagleBigramTokensAreFlattened() throws Exception {
    byte[] payload =
        batchOf(
            p -> {
              p.packArrayHeader(7)
                  .packString("BlockStored")
                  .packArrayHeader(1)
                  .packLong(9)
                  .packNil();
              p.packArrayHeader(4);
              for (int t = 1; t <= 4; t++) {
                p.packArrayHeader(2).packInt(t).packLong(t + 1);
              }
              p.packInt(4).packNil().packNil();
            });
    BlockStored s = assertInstanceOf(BlockStored.class, decode(payload).events().get(0));
    assertTrue(s.eagle());
    assertArrayEquals(new int[] {1, 2, 3, 4, 5}, s.tokenIds());
    assertNull(s.medium());
  }

  @Test
  void u32TokenIdsAboveIntMaxKeepTheirBits() throws Exception {
    BlockStored s =
        assertInstanceOf(
            BlockStored.class,
            decode(
                    hex(
                        "93",
                        TS,
                        "91",
                        "95",
                        TAG_STORED,
                        "9101",
                        "c0",
                        "92ceffffffffce80000000",
                        "02",
                        "00"))
                .events()
                .get(0));
    assertArrayEquals(new int[] {-1, Integer.MIN_VALUE}, s.tokenIds());
  }

  @Test
  void unknownTagsAreDroppedAndTheBatchKept() throws Exception {
    byte[] payload =
        pack(
            p -> {
              p.packArrayHeader(3).packDouble(1.0).packArrayHeader(4);
              p.packArrayHeader(3).packString("BlockMoved").packArrayHeader(1).packInt(1).packNil();
              p.packArrayHeader(1).packString("AllBlocksCleared");
              p.packMapHeader(2)
                  .packString("type")
                  .packString("Ignored")
                  .packString("x")
                  .packInt(1);
              p.packArrayHeader(2).packString("Ignored").packMapHeader(0);
              p.packNil();
            });
    KvEventBatch b = decode(payload);
    assertEquals(1, b.events().size());
    assertInstanceOf(AllBlocksCleared.class, b.events().get(0));
  }

  @Test
  void extraKeysYieldMultimodalHashes() throws Exception {
    String digest = "0123456789abcdef".repeat(4);
    String lora = "fedcba9876543210".repeat(4);
    byte[] payload =
        batchOf(
            p -> {
              p.packArrayHeader(9)
                  .packString("BlockStored")
                  .packArrayHeader(3)
                  .packInt(1)
                  .packInt(2)
                  .packInt(3)
                  .packNil();
              Payloads.packTokens(p, 1, 12);
              p.packInt(4).packNil().packString("GPU").packString(lora);
              p.packArrayHeader(3);
              p.packArrayHeader(4)
                  .packString(lora)
                  .packString(digest)
                  .packString("tenant-a")
                  .packBinaryHeader(2)
                  .writePayload(new byte[] {1, 2});
              p.packNil();
              p.packArrayHeader(4)
                  .packArrayHeader(2)
                  .packString("opaque-id")
                  .packInt(-3)
                  .packArrayHeader(2)
                  .packString(digest)
                  .packInt(0)
                  .packInt(7)
                  .packArrayHeader(3)
                  .packString("x")
                  .packInt(1)
                  .packInt(2);
            });
    BlockStored s = assertInstanceOf(BlockStored.class, decode(payload).events().get(0));
    assertEquals(lora, s.loraName());
    long[][] mm = s.mmHashes();
    assertEquals(3, mm.length);
    assertArrayEquals(new long[] {0x0123456789abcdefL}, mm[0]);
    assertNull(mm[1]);
    long opaque = BlockHasher.xxh3("opaque-id".getBytes(StandardCharsets.UTF_8), 0L);
    assertArrayEquals(new long[] {opaque, 0x0123456789abcdefL}, mm[2]);
  }

  @Test
  void emptyMediumAndLoraNameAreAbsent() throws Exception {
    BlockStored s =
        onlyStored(decode(hex("93", TS, "91", "98", STORED_HEAD, "c0", "a0", "a0", "00")));
    assertNull(s.medium());
    assertNull(s.loraName());
  }

  @Test
  void offsetOverloadDecodesASlice() throws Exception {
    byte[] inner = hex("92", TS, "90");
    byte[] framed = new byte[inner.length + 4];
    System.arraycopy(inner, 0, framed, 2, inner.length);
    KvEventBatch b = KvEventDecoder.decode(framed, 2, inner.length);
    assertEquals(1700000000.5, b.timestamp());
    assertEquals(List.of(), b.events());
  }
}
