package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The benchmark's payloads are real events: they decode to what was encoded, and applying the
 * prologue and two cycles to an index stores and removes every block (no rejected store, nothing
 * dropped) with the resident set held steady, so the harness measures work the node really does.
 */
class IngestWorkloadTest {

  private static final int K = 4;
  private static final int B = 16;

  @ParameterizedTest
  @EnumSource(WireFormat.class)
  void payloadsDecodeAndApplyCleanly(WireFormat wire) throws Exception {
    IngestWorkload w = IngestWorkload.cycle(7, 3, 0, K, B, 16, wire);
    assertEquals(5 * K, w.size());
    WorkerRank rank = new WorkerRank(4, 0);
    PrefixChainIndex index = new PrefixChainIndex();
    ApplyStats total = ApplyStats.NONE;
    long batches = K + 2 * 4 * K;
    long stores = 0;
    for (long n = 0; n < batches; n++) {
      KvEventBatch b = KvEventDecoder.decode(w.payload(n));
      assertEquals(1, b.events().size());
      assertEquals(0, b.dpRank());
      boolean store = n < K || (n - K) % 2 == 0;
      if (store) {
        stores++;
        BlockStored s = assertInstanceOf(BlockStored.class, b.events().get(0));
        BlockStored expected = (BlockStored) w.batch(n).events().get(0);
        assertArrayEquals(expected.blockHashes(), s.blockHashes());
        assertArrayEquals(expected.tokenIds(), s.tokenIds());
        assertEquals(expected.hasParent(), s.hasParent());
        assertEquals(expected.parentHash(), s.parentHash());
        assertEquals(B * 16, s.tokenIds().length);
      } else {
        BlockRemoved r = assertInstanceOf(BlockRemoved.class, b.events().get(0));
        assertArrayEquals(
            ((BlockRemoved) w.batch(n).events().get(0)).blockHashes(), r.blockHashes());
      }
      total = total.plus(EventApplier.apply(index, rank, 16, false, b));
      assertEquals(stores * B, w.storedBlocks(n + 1));
      if (n >= K) {
        long resident = index.size();
        assertTrue(
            resident == K * B || resident == K * B + B,
            "resident blocks after batch " + n + ": " + resident);
      }
    }
    assertEquals(new ApplyStats(stores * B, (batches - stores) * B, 0, 0, 0, 0), total);
    assertEquals(batches * B, w.blocks(batches));
  }

  /** Several events per message (one message per scheduler step): the same events, grouped, in order. */
  @ParameterizedTest
  @ValueSource(ints = {2, 4})
  void messagesGroupConsecutiveEventsAndStillApplyCleanly(int perMessage) throws Exception {
    IngestWorkload single = IngestWorkload.cycle(7, 3, 0, K, B, 16, WireFormat.MAP);
    IngestWorkload w = IngestWorkload.cycle(7, 3, 0, K, B, perMessage, 16, WireFormat.MAP);
    assertEquals(5 * K / perMessage, w.size());
    assertEquals(B * perMessage, w.blocksPerBatch());
    WorkerRank rank = new WorkerRank(4, 0);
    PrefixChainIndex index = new PrefixChainIndex();
    ApplyStats total = ApplyStats.NONE;
    long messages = (K + 2 * 4 * K) / perMessage;
    for (long n = 0; n < messages; n++) {
      KvEventBatch b = KvEventDecoder.decode(w.payload(n));
      assertEquals(perMessage, b.events().size());
      for (int e = 0; e < perMessage; e++) {
        Object expected = single.batch(n * perMessage + e).events().get(0);
        Object got = b.events().get(e);
        assertEquals(expected.getClass(), got.getClass());
        long[] want =
            expected instanceof BlockStored s
                ? s.blockHashes()
                : ((BlockRemoved) expected).blockHashes();
        long[] have =
            got instanceof BlockStored s ? s.blockHashes() : ((BlockRemoved) got).blockHashes();
        assertArrayEquals(want, have, "message " + n + " event " + e);
      }
      total = total.plus(EventApplier.apply(index, rank, 16, false, b));
      assertEquals(single.storedBlocks((n + 1) * perMessage), w.storedBlocks(n + 1));
      assertEquals(total.storedBlocks(), w.storedBlocks(n + 1));
    }
    assertEquals(0, total.rejectedStores());
    assertEquals(messages * perMessage * B, total.storedBlocks() + total.removedBlocks());
    assertEquals(messages * perMessage * B, w.blocks(messages));
  }

  @org.junit.jupiter.api.Test
  void eventsPerMessageMustDivideTheChain() {
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class,
        () -> IngestWorkload.cycle(7, 3, 0, K, B, 3, 16, WireFormat.MAP));
  }
}
