package io.kvselect.tools.mock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.testing.WireVectors;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Golden msgpack frames of kv_events_wire.md section 4 (vLLM array and map forms). */
class KvEventEncoderTest {

  static final double TS = 1700000000.5;
  static final long H1 = Long.parseUnsignedLong("15760518052499183552");
  static final long H2 = 4284880390408332321L;

  static BlockStored twoBlocks() {
    int[] tokens = IntStream.rangeClosed(1, 32).toArray();
    return new BlockStored(
        new long[] {H1, H2},
        false,
        0L,
        tokens,
        16,
        "GPU",
        null,
        null,
        null,
        0,
        "full_attention",
        null);
  }

  static String hex(KvEvent e, WireFormat wire) {
    return HexFormat.of()
        .formatHex(KvEventEncoder.encode(new KvEventBatch(TS, List.of(e), 0), wire));
  }

  @Test
  void arrayBlockStoredIsTheEightElementVectorPlusExtraKeys() {
    // Section 4.1: "With extra_keys filled: 99 and 92 c0 c0 appended."
    String expected = WireVectors.V41_STORED.replaceFirst("9198ab", "9199ab");
    expected = expected.substring(0, expected.length() - 2) + "92c0c0" + "00";
    String actual = hex(twoBlocks(), WireFormat.ARRAY);
    assertEquals(expected, actual);
    assertEquals(87 + 3, actual.length() / 2);
  }

  @Test
  void arrayRemovedAndClearedMatchTheVectors() {
    assertEquals(
        WireVectors.V41_REMOVED,
        hex(new BlockRemoved(new long[] {H2}, "GPU", 0, null), WireFormat.ARRAY));
    assertEquals(WireVectors.V41_CLEARED, hex(new AllBlocksCleared(), WireFormat.ARRAY));
  }

  @Test
  void mapFormsMatchTheVllm026Vectors() {
    assertEquals(WireVectors.V42_STORED, hex(twoBlocks(), WireFormat.MAP));
    assertEquals(228, HexFormat.of().parseHex(WireVectors.V42_STORED).length);
    assertEquals(
        WireVectors.V42_REMOVED,
        hex(new BlockRemoved(new long[] {H2}, "GPU", 0, null), WireFormat.MAP));
    assertEquals(WireVectors.V42_CLEARED, hex(new AllBlocksCleared(), WireFormat.MAP));
  }

  @Test
  void extraKeysCarryLoraNameOnEveryBlockAndSaltOnTheRootBlock() {
    BlockStored root =
        new BlockStored(
            new long[] {1, 2},
            false,
            0L,
            new int[] {1, 2},
            1,
            "GPU",
            "ad",
            "s",
            null,
            0,
            null,
            null);
    String h = hex(root, WireFormat.ARRAY);
    // ... a2"ad" (lora_name), then extra_keys = [["ad","s"], ["ad"]], then rank 0
    assertEquals("a2616492" + "92a26164a173" + "91a26164" + "00", h.substring(h.length() - 30));
    BlockStored child =
        new BlockStored(
            new long[] {3}, true, 2L, new int[] {3}, 1, "GPU", null, "s", null, 0, null, null);
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
