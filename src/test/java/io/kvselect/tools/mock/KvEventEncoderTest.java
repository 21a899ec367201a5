package io.kvselect.tools.mock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Golden msgpack frames of kv_events_wire.md section 4 (vLLM array and map forms). */
class KvEventEncoderTest {

  static final double TS = 1700000000.5;
  static final long H1 = Long.parseUnsignedLong("15760518052499183552");
  static final long H2 = 4284880390408332321L;

  static final String ARRAY_STORED_8 = "93cb41d954fc402000009198ab426c6f636b53746f72656492cfdab89baa7b5857c0"
      + "cf3b76f40347536421c0dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a3475055c000";
  static final String ARRAY_REMOVED = "93cb41d954fc402000009193ac426c6f636b52656d6f76656491cf3b76f40347536421a347505500";
  static final String ARRAY_CLEARED = "93cb41d954fc402000009191b0416c6c426c6f636b73436c656172656400";
  static final String MAP_STORED = "93cb41d954fc40200000918ba474797065ab426c6f636b53746f726564ac626c6f636b5f686173"
      + "68657392cfdab89baa7b5857c0cf3b76f40347536421b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473dc0020"
      + "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20aa626c6f636b5f73697a6510a76c6f72615f6964c0a6"
      + "6d656469756da3475055a96c6f72615f6e616d65c0aa65787472615f6b65797392c0c0a967726f75705f69647800b26b765f63616368"
      + "655f737065635f6b696e64ae66756c6c5f617474656e74696f6e00";
  static final String MAP_REMOVED = "93cb41d954fc402000009184a474797065ac426c6f636b52656d6f766564ac626c6f636b5f6861"
      + "7368657391cf3b76f40347536421a66d656469756da3475055a967726f75705f6964780000";
  static final String MAP_CLEARED = "93cb41d954fc402000009181a474797065b0416c6c426c6f636b73436c656172656400";

  static BlockStored twoBlocks() {
    int[] tokens = IntStream.rangeClosed(1, 32).toArray();
    return new BlockStored(new long[] {H1, H2}, false, 0L, tokens, 16, "GPU", null, null, null, 0,
        "full_attention", null);
  }

  static String hex(KvEvent e, WireFormat wire) {
    return HexFormat.of().formatHex(KvEventEncoder.encode(new KvEventBatch(TS, List.of(e), 0), wire));
  }

  @Test
  void arrayBlockStoredIsTheEightElementVectorPlusExtraKeys() {
    // Section 4.1: "With extra_keys filled: 99 and 92 c0 c0 appended."
    String expected = ARRAY_STORED_8.replaceFirst("9198ab", "9199ab");
    expected = expected.substring(0, expected.length() - 2) + "92c0c0" + "00";
    String actual = hex(twoBlocks(), WireFormat.ARRAY);
    assertEquals(expected, actual);
    assertEquals(87 + 3, actual.length() / 2);
  }

  @Test
  void arrayRemovedAndClearedMatchTheVectors() {
    assertEquals(ARRAY_REMOVED, hex(new BlockRemoved(new long[] {H2}, "GPU", 0, null), WireFormat.ARRAY));
    assertEquals(ARRAY_CLEARED, hex(new AllBlocksCleared(), WireFormat.ARRAY));
  }

  @Test
  void mapFormsMatchTheVllm026Vectors() {
    assertEquals(MAP_STORED, hex(twoBlocks(), WireFormat.MAP));
    assertEquals(228, HexFormat.of().parseHex(MAP_STORED).length);
    assertEquals(MAP_REMOVED, hex(new BlockRemoved(new long[] {H2}, "GPU", 0, null), WireFormat.MAP));
    assertEquals(MAP_CLEARED, hex(new AllBlocksCleared(), WireFormat.MAP));
  }

  @Test
  void extraKeysCarryLoraNameOnEveryBlockAndSaltOnTheRootBlock() {
    BlockStored root = new BlockStored(new long[] {1, 2}, false, 0L, new int[] {1, 2}, 1, "GPU", "ad", "s", null, 0,
        null, null);
    String h = hex(root, WireFormat.ARRAY);
    // ... a2"ad" (lora_name), then extra_keys = [["ad","s"], ["ad"]], then rank 0
    assertEquals("a2616492" + "92a26164a173" + "91a26164" + "00", h.substring(h.length() - 30));
    BlockStored child = new BlockStored(new long[] {3}, true, 2L, new int[] {3}, 1, "GPU", null, "s", null, 0, null,
        null);
    String c = hex(child, WireFormat.ARRAY);
    assertEquals("c091c000", c.substring(c.length() - 8));
  }

  @Test
  void smallAndNegativeHashesUseUnsignedForms() {
    BlockRemoved r = new BlockRemoved(new long[] {5, -1L}, "GPU", 0, null);
    String h = hex(r, WireFormat.ARRAY);
    assertTrue(h.contains("ac426c6f636b52656d6f766564" + "9205cfffffffffffffffff"), h);
  }
}
