package io.kvselect.core.events;

import static io.kvselect.core.events.Payloads.TAG_REMOVED;
import static io.kvselect.core.events.Payloads.TAG_STORED;
import static io.kvselect.core.events.Payloads.TS;
import static io.kvselect.core.events.Payloads.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The direct reads of token ids, hashes and strings give what the checked path gives, for every
 * msgpack int form, with the fast and the checked path mixed inside one array, and a payload cut
 * anywhere inside those arrays is refused as malformed (never another exception).
 */
class WireReaderFastPathTest {

  /** Hashes in every int form, then the value each must decode to (its 64 bits). */
  private static final String[] HASH_FORMS = {
    "05",
    "7f",
    "ff",
    "e0",
    "cc80",
    "ccff",
    "cd1234",
    "cdffff",
    "ce89abcdef",
    "ceffffffff",
    "cf0123456789abcdef",
    "cfffffffffffffffff",
    "d080",
    "d07f",
    "d18000",
    "d1ff00",
    "d280000000",
    "d2fffffffe",
    "d38000000000000000",
    "d3fffffffffffffffe"
  };

  private static final long[] HASH_VALUES = {
    5,
    127,
    -1,
    -32,
    0x80,
    0xff,
    0x1234,
    0xffff,
    0x89abcdefL,
    0xffffffffL,
    0x0123456789abcdefL,
    -1L,
    -128,
    127,
    -32768,
    -256,
    Integer.MIN_VALUE,
    -2,
    Long.MIN_VALUE,
    -2
  };

  @Test
  void hashesInEveryIntFormAndABinInTheMiddle() throws Exception {
    StringBuilder h = new StringBuilder();
    for (String f : HASH_FORMS) {
      h.append(f);
    }
    // a bin hash (checked path) in the middle, then int forms again (fast path resumes)
    String hashes =
        "dc" + String.format("%04x", HASH_FORMS.length * 2 + 1) + h + "c408000000000000abcd" + h;
    KvEventBatch b = KvEventDecoder.decode(hex("92", TS, "91", "92", TAG_REMOVED, hashes));
    long[] want = new long[HASH_VALUES.length * 2 + 1];
    System.arraycopy(HASH_VALUES, 0, want, 0, HASH_VALUES.length);
    want[HASH_VALUES.length] = 0xabcd;
    System.arraycopy(HASH_VALUES, 0, want, HASH_VALUES.length + 1, HASH_VALUES.length);
    assertArrayEquals(want, ((BlockRemoved) b.events().get(0)).blockHashes());
  }

  @Test
  void tokenIdsInEveryUnsignedFormAndCheckedFormsInBetween() throws Exception {
    // fixint, uint8, uint16, uint32 (fast); uint64 small and int8 positive (checked); fast again
    String tokens =
        "dc0009"
            + "07"
            + "ccc8"
            + "cd1234"
            + "cefffffffe"
            + "cf0000000000000009"
            + "d005"
            + "01"
            + "cc02"
            + "ce00000003";
    byte[] payload = hex("92", TS, "91", "95", TAG_STORED, "9101", "c0", tokens, "10");
    BlockStored s = (BlockStored) KvEventDecoder.decode(payload).events().get(0);
    assertArrayEquals(new int[] {7, 200, 0x1234, 0xfffffffe, 9, 5, 1, 2, 3}, s.tokenIds());
    byte[] negative = hex("92", TS, "91", "95", TAG_STORED, "9101", "c0", "9207ff", "10");
    assertThrows(MalformedEventException.class, () -> KvEventDecoder.decode(negative));
  }

  @Test
  void aPayloadCutInsideTheArraysIsMalformed() {
    StringBuilder h = new StringBuilder();
    for (String f : HASH_FORMS) {
      h.append(f);
    }
    byte[] full =
        hex(
            "92",
            TS,
            "91",
            "95",
            TAG_STORED,
            "dc" + String.format("%04x", HASH_FORMS.length),
            h.toString(),
            "c0",
            "94" + "01" + "cc90" + "cd1000" + "ce00010000",
            "04");
    for (int cut = 1; cut < full.length; cut++) {
      byte[] part = Arrays.copyOf(full, cut);
      assertThrows(
          MalformedEventException.class, () -> KvEventDecoder.decode(part), "cut at " + cut);
    }
  }

  @Test
  void knownNamesAndValuesAreSharedConstantsAndOthersAreRead() throws Exception {
    // {"ts": 1, "events": [{"type": "BlockRemoved", "block_hashes": [1], "medium": "GPU"},
    //  {"type": "BlockRemoved", "block_hashes": [2], "medium": "NVMe"}]}
    byte[] payload =
        hex(
            "82",
            "a2747301",
            "a66576656e747392",
            "83",
            "a474797065",
            TAG_REMOVED,
            "ac626c6f636b5f686173686573",
            "9101",
            "a66d656469756d",
            "a3475055",
            "83",
            "a474797065",
            TAG_REMOVED,
            "ac626c6f636b5f686173686573",
            "9102",
            "a66d656469756d",
            "a44e564d65");
    KvEventBatch b = KvEventDecoder.decode(payload);
    BlockRemoved gpu = (BlockRemoved) b.events().get(0);
    BlockRemoved nvme = (BlockRemoved) b.events().get(1);
    assertSame("GPU", gpu.medium());
    assertEquals("NVMe", nvme.medium());
    assertArrayEquals(new long[] {2}, nvme.blockHashes());
  }
}
