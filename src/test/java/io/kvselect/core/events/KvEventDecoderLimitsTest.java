package io.kvselect.core.events;

import static io.kvselect.core.events.Payloads.TAG_REMOVED;
import static io.kvselect.core.events.Payloads.TAG_STORED;
import static io.kvselect.core.events.Payloads.TS;
import static io.kvselect.core.events.Payloads.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link KvEventDecoder} at the edges of each field's range (the last accepted value and the first
 * rejected one) and the message each rejection carries.
 */
class KvEventDecoderLimitsTest {

  /** {@code [ts, [<event>], 0]}: the batch array around one event. */
  private static final String EV = "93" + TS + "91";

  /** A 5-element BlockStored with hashes [1] and no parent, before its tokens. */
  private static final String STORED_HEAD = "95" + TAG_STORED + "9101c0";

  private static String message(String... hexParts) {
    byte[] payload = hex(hexParts);
    return assertThrows(MalformedEventException.class, () -> KvEventDecoder.decode(payload))
        .getMessage();
  }

  private static BlockStored onlyStore(String... hexParts) throws MalformedEventException {
    List<KvEvent> events = KvEventDecoder.decode(hex(hexParts)).events();
    assertEquals(1, events.size());
    return assertInstanceOf(BlockStored.class, events.get(0));
  }

  private static void assertMessage(String expected, String actual) {
    assertEquals(expected, actual);
  }

  @Test
  void emptyPayloadAndEmptyRange() throws Exception {
    assertMessage("empty payload", message(""));
    byte[] valid = hex(EV, "91", "b0416c6c426c6f636b73436c6561726564", "00");
    assertEquals(1, KvEventDecoder.decode(valid, 0, valid.length).events().size());
    assertThrows(MalformedEventException.class, () -> KvEventDecoder.decode(valid, 3, 0));
    assertThrows(
        IndexOutOfBoundsException.class, () -> KvEventDecoder.decode(valid, 1, valid.length));
  }

  @Test
  void aRangeInsideALargerBufferIsDecodedAlone() throws Exception {
    byte[] inner = hex(EV, "91", "b0416c6c426c6f636b73436c6561726564", "00");
    byte[] buffer = new byte[inner.length + 6];
    buffer[0] = (byte) 0xc1;
    buffer[1] = (byte) 0xc1;
    System.arraycopy(inner, 0, buffer, 2, inner.length);
    buffer[inner.length + 2] = (byte) 0xc1;
    assertEquals(1, KvEventDecoder.decode(buffer, 2, inner.length).events().size());
  }

  @Test
  void envelopeMessages() {
    assertMessage("invalid msgpack byte 0xc1 (at byte 0)", message("c1"));
    assertMessage(
        "batch must be an array [ts, events, dp_rank] or a map, got INTEGER (at byte 0)",
        message("05"));
    assertMessage("batch array has 1 elements, needs [ts, events] (at byte 1)", message("91", TS));
    assertMessage("batch array has 0 elements, needs [ts, events] (at byte 1)", message("90"));
    assertMessage("batch key must be string, got integer (at byte 1)", message("810101"));
  }

  @Test
  void eventArrayMessages() {
    assertMessage("empty event array (at byte 12)", message(EV, "90", "00"));
    assertMessage("event tag must be string, got integer (at byte 12)", message(EV, "9101", "00"));
    assertMessage(
        "BlockStored array has 4 elements, needs at least 5 (at byte 24)",
        message(EV, "94", TAG_STORED, "9101c090", "00"));
    assertMessage(
        "BlockRemoved array without block_hashes (at byte 25)",
        message(EV, "91", TAG_REMOVED, "00"));
    assertMessage(
        "token bigram must have 2 elements (at byte 29)",
        message(EV, STORED_HEAD, "9193010203", "04", "00"));
    assertMessage(
        "BlockStored needs block_hashes, token_ids and block_size (at byte 40)",
        message(EV, "82a474797065", TAG_STORED, "a9746f6b656e5f696473", "90", "00"));
  }

  @Test
  void declaredLengthsAreCheckedAgainstTheBytesLeft() {
    // str8 tag declaring 13 bytes where 12 remain
    assertMessage(
        "event tag declares 13 elements/bytes but only 12 bytes remain (at byte 14)",
        message(EV, "91", "d90d", "426c6f636b53746f72656400"));
    // map16 envelope declaring 3 entries (6 bytes at least) where 4 remain
    assertMessage(
        "batch declares 3 elements/bytes but only 4 bytes remain (at byte 3)",
        message("de0003", "a2747301"));
    // array16 of 3 token ids where exactly 3 bytes remain: accepted length, then block_size missing
    String tooShort = message(EV, STORED_HEAD, "dc0003", "010203");
    assertEquals(false, tooShort.contains("declares"), tooShort);
    // bin8 hash declaring 9 bytes where 9 remain is read; 10 is rejected
    assertMessage(
        "block_hashes declares 10 elements/bytes but only 9 bytes remain (at byte 28)",
        message(EV, "92", TAG_REMOVED, "91c40a", "000000000000000102"));
  }

  @Test
  void aBinHashOfExactlyTheBytesLeftIsRead() throws Exception {
    List<KvEvent> events =
        KvEventDecoder.decode(
                hex("92", TS, "91", "92", TAG_REMOVED, "91c409", "ff0000000000000102"))
            .events();
    assertArrayEquals(new long[] {0x102}, ((BlockRemoved) events.get(0)).blockHashes());
  }

  @Test
  void blockSizeLimits() throws Exception {
    assertEquals(0, onlyStore(EV, STORED_HEAD, "90", "00", "00").blockSize());
    assertEquals(
        Integer.MAX_VALUE, onlyStore(EV, STORED_HEAD, "90", "ce7fffffff", "00").blockSize());
    assertEquals(4, onlyStore(EV, STORED_HEAD, "90", "cf0000000000000004", "00").blockSize());
    assertEquals(4, onlyStore(EV, STORED_HEAD, "90", "d30000000000000004", "00").blockSize());
    assertMessage(
        "block_size out of range: 2147483648 (at byte 33)",
        message(EV, STORED_HEAD, "90", "ce80000000", "00"));
    assertMessage(
        "block_size out of range: -1 (at byte 29)", message(EV, STORED_HEAD, "90", "ff", "00"));
    assertMessage(
        "block_size out of range: 18446744073709551615 (at byte 37)",
        message(EV, STORED_HEAD, "90", "cfffffffffffffffff", "00"));
    assertMessage(
        "block_size must be integer, got string (at byte 28)",
        message(EV, STORED_HEAD, "90", "a134", "00"));
  }

  @Test
  void tokenIdLimitsInEveryIntegerFormat() throws Exception {
    BlockStored s =
        onlyStore(
            EV,
            STORED_HEAD,
            "97",
            "00",
            "ceffffffff",
            "d30000000000000007",
            "cf00000000ffffffff",
            "d000",
            "cd0102",
            "d20000002a",
            "04",
            "00");
    assertArrayEquals(new int[] {0, -1, 7, -1, 0, 0x102, 42}, s.tokenIds());
    assertMessage(
        "token id out of range: 4294967296 (at byte 37)",
        message(EV, STORED_HEAD, "91", "d30000000100000000", "04", "00"));
    assertMessage(
        "token id out of range: -1 (at byte 30)",
        message(EV, STORED_HEAD, "91", "d0ff", "04", "00"));
    assertMessage(
        "token id out of range: 18446744073709551615 (at byte 37)",
        message(EV, STORED_HEAD, "91", "cfffffffffffffffff", "04", "00"));
  }

  @Test
  void emptyTokenIdsAreAnEmptyArray() throws Exception {
    BlockStored s = onlyStore(EV, STORED_HEAD, "90", "04", "00");
    assertArrayEquals(new int[0], s.tokenIds());
    assertEquals(false, s.eagle());
  }

  @Test
  void aUint64ZeroIsZero() throws Exception {
    assertEquals(0, onlyStore(EV, STORED_HEAD, "90", "cf0000000000000000", "00").blockSize());
  }

  @Test
  void mapStoresNeedHashesTokensAndBlockSize() throws Exception {
    String type = "a474797065" + TAG_STORED;
    String hashes = "ac626c6f636b5f686173686573" + "9101";
    String tokens = "a9746f6b656e5f696473" + "9401020304";
    String size = "aa626c6f636b5f73697a65" + "04";
    String needs = "BlockStored needs block_hashes, token_ids and block_size";
    assertEquals(4, onlyStore(EV, "84", type, hashes, tokens, size, "00").blockSize());
    assertTrue(message(EV, "83", type, tokens, size, "00").startsWith(needs));
    assertTrue(message(EV, "83", type, hashes, size, "00").startsWith(needs));
    assertTrue(message(EV, "83", type, hashes, tokens, "00").startsWith(needs));
  }

  @Test
  void dpRankLimits() throws Exception {
    assertMessage(
        "dp_rank out of range: 18446744073709551615 (at byte 20)",
        message("93", TS, "90", "cfffffffffffffffff"));
    assertEquals(
        Integer.MIN_VALUE, KvEventDecoder.decode(hex("93", TS, "90", "d280000000")).dpRank());
    assertEquals(
        Integer.MAX_VALUE, KvEventDecoder.decode(hex("93", TS, "90", "ce7fffffff")).dpRank());
    assertNull(KvEventDecoder.decode(hex("93", TS, "90", "c0")).dpRank());
    assertMessage(
        "dp_rank out of range: -2147483649 (at byte 20)",
        message("93", TS, "90", "d3ffffffff7fffffff"));
  }

  @Test
  void groupIdxLimitsAreLenient() throws Exception {
    String tail = "c0" + "a3475055" + "c0" + "c0";
    assertEquals(
        Integer.valueOf(0),
        onlyStore(EV, "9a", TAG_STORED, "9101c0", "9401020304", "04", tail, "00", "00").groupIdx());
    assertEquals(
        Integer.valueOf(Integer.MAX_VALUE),
        onlyStore(EV, "9a", TAG_STORED, "9101c0", "9401020304", "04", tail, "ce7fffffff", "00")
            .groupIdx());
    assertNull(
        onlyStore(EV, "9a", TAG_STORED, "9101c0", "9401020304", "04", tail, "ce80000000", "00")
            .groupIdx());
    assertNull(
        onlyStore(EV, "9a", TAG_STORED, "9101c0", "9401020304", "04", tail, "ff", "00").groupIdx());
    assertNull(
        onlyStore(EV, "9a", TAG_STORED, "9101c0", "9401020304", "04", tail, "a130", "00")
            .groupIdx());
  }

  @Test
  void emptyKindAndLocalityStringsAreAbsent() throws Exception {
    String head = "9d" + TAG_STORED + "9101c0" + "9401020304" + "04" + "c0a3475055c0c0" + "00";
    BlockStored empty = onlyStore(EV, head, "a0", "c0", "a0", "00");
    assertNull(empty.kvCacheSpecKind());
    assertNull(empty.locality());
    BlockStored set = onlyStore(EV, head, "a178", "c0", "a14c", "00");
    assertEquals("x", set.kvCacheSpecKind());
    assertEquals("L", set.locality());
    BlockStored other = onlyStore(EV, head, "01", "c0", "02", "00");
    assertNull(other.kvCacheSpecKind());
    assertNull(other.locality());
  }

  @Test
  void allBlocksClearedWithExtraElementsKeepsTheNextEventAligned() throws Exception {
    List<KvEvent> events =
        KvEventDecoder.decode(
                hex(
                    "93",
                    TS,
                    "92",
                    "93",
                    "b0416c6c426c6f636b73436c6561726564",
                    "05",
                    "a178",
                    "92",
                    TAG_REMOVED,
                    "9107",
                    "00"))
            .events();
    assertEquals(2, events.size());
    assertInstanceOf(AllBlocksCleared.class, events.get(0));
    assertArrayEquals(new long[] {7}, ((BlockRemoved) events.get(1)).blockHashes());
  }

  @Test
  void unknownTagsWithElementsAreSkipped() throws Exception {
    List<KvEvent> events =
        KvEventDecoder.decode(
                hex(
                    "93",
                    TS,
                    "92",
                    "93",
                    "a3466f6f",
                    "05",
                    "9201a178",
                    "92",
                    TAG_REMOVED,
                    "9107",
                    "00"))
            .events();
    assertEquals(1, events.size());
    assertArrayEquals(new long[] {7}, ((BlockRemoved) events.get(0)).blockHashes());
  }
}
