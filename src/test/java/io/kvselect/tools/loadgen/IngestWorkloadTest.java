package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.kvselect.core.events.ApplyStats;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.EventApplier;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.events.KvEventDecoder;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.tools.mock.WireFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The benchmark's payloads are real events: they decode, and applying two cycles to an index
 * stores and removes every block (no rejected store, nothing dropped) and leaves it empty, so the
 * harness measures work the node really does.
 */
class IngestWorkloadTest {

  @ParameterizedTest
  @EnumSource(WireFormat.class)
  void cyclesDecodeAndApplyCleanly(WireFormat wire) throws Exception {
    IngestWorkload w = IngestWorkload.cycle(7, 3, 0, 4, 16, 16, wire);
    assertEquals(8, w.size());
    WorkerRank rank = new WorkerRank(4, 0);
    PrefixChainIndex index = new PrefixChainIndex();
    ApplyStats total = ApplyStats.NONE;
    for (int n = 0; n < 2 * w.size(); n++) {
      KvEventBatch b = KvEventDecoder.decode(w.payload(n));
      assertEquals(1, b.events().size());
      assertEquals(0, b.dpRank());
      int i = n % w.size();
      if (i < 4) {
        BlockStored s = assertInstanceOf(BlockStored.class, b.events().get(0));
        BlockStored expected = (BlockStored) w.batch(i).events().get(0);
        assertArrayEquals(expected.blockHashes(), s.blockHashes());
        assertArrayEquals(expected.tokenIds(), s.tokenIds());
        assertEquals(i > 0, s.hasParent());
        assertEquals(16 * 16, s.tokenIds().length);
      } else {
        BlockRemoved r = assertInstanceOf(BlockRemoved.class, b.events().get(0));
        assertEquals(16, r.blockHashes().length);
      }
      total = total.plus(EventApplier.apply(index, rank, 16, false, b));
      assertEquals(i < 4 ? 16L * (i + 1) : 16L * (7 - i), index.size(), "resident blocks after batch " + n);
    }
    assertEquals(new ApplyStats(128, 128, 0, 0, 0, 0), total);
    assertEquals(128, w.storedBlocks(16));
    assertEquals(64 + 48, w.storedBlocks(11));
    assertEquals(0, index.size());
  }
}
