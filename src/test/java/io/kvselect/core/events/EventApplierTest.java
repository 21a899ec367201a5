package io.kvselect.core.events;

import static io.kvselect.core.events.Payloads.H1;
import static io.kvselect.core.events.Payloads.H2;
import static io.kvselect.core.events.Payloads.hex;
import static io.kvselect.core.events.Payloads.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.WireVectors;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link EventApplier} against a real {@link PrefixChainIndex}. */
class EventApplierTest {

  private static final WorkerRank R0 = new WorkerRank(1, 0);
  private static final WorkerRank R1 = new WorkerRank(1, 1);
  private static final WorkerRank OTHER = new WorkerRank(2, 0);

  private final PrefixChainIndex index = new PrefixChainIndex();

  private static long[] plainLocal(int[] tokens, int blockSize) {
    return BlockHasher.localBlockHashes(
        tokens, tokens.length, blockSize, BlockHasher.CHAIN_SEED, false, null);
  }

  private static KvEventBatch batch(KvEvent... events) {
    return new KvEventBatch(0.0, List.of(events), null);
  }

  private static BlockStored stored(
      long[] hashes, Long parent, int[] tokens, int blockSize, String medium, String locality) {
    return new BlockStored(
        hashes,
        parent != null,
        parent == null ? 0 : parent,
        tokens,
        blockSize,
        medium,
        null,
        null,
        null,
        null,
        null,
        locality);
  }

  private ApplyStats apply(WorkerRank rank, int blockSize, KvEventBatch b) {
    return EventApplier.apply(index, rank, blockSize, false, b);
  }

  private RankOverlap overlap(WorkerRank rank, long[] query) {
    return index.findMatches(query).of(rank);
  }

  @Test
  void goldenStoreIsReHashedSoAQueryOverTheSameTokensMatches() throws Exception {
    ApplyStats s = apply(R0, 16, KvEventDecoder.decode(hex(WireVectors.V41_STORED)));
    assertEquals(new ApplyStats(2, 0, 0, 0, 0, 0), s);
    long[] query = plainLocal(range(1, 32), 16);
    assertEquals(2, overlap(R0, query).device());
    List<StoredBlock> dump = index.dump();
    assertEquals(2, dump.size());
    assertEquals(new StoredBlock(R0, StorageTier.DEVICE, false, 0, H1, query[0]), dump.get(0));
    assertEquals(new StoredBlock(R0, StorageTier.DEVICE, true, H1, H2, query[1]), dump.get(1));
  }

  @Test
  void goldenRemoveDropsTheSecondBlock() throws Exception {
    apply(R0, 16, KvEventDecoder.decode(hex(WireVectors.V41_STORED)));
    ApplyStats s = apply(R0, 16, KvEventDecoder.decode(hex(WireVectors.V41_REMOVED)));
    assertEquals(1, s.removedBlocks());
    assertEquals(1, overlap(R0, plainLocal(range(1, 32), 16)).device());
    assertEquals(1, index.size());
  }

  @Test
  void clearedDropsEveryRankOfTheWorkerOnEveryTier() throws Exception {
    KvEventBatch store = KvEventDecoder.decode(hex(WireVectors.V41_STORED));
    apply(R0, 16, store);
    apply(R1, 16, store);
    apply(OTHER, 16, store);
    apply(R1, 16, batch(stored(new long[] {77}, null, range(1, 16), 16, "CPU", null)));
    ApplyStats s = apply(R0, 16, KvEventDecoder.decode(hex(WireVectors.V41_CLEARED)));
    assertEquals(1, s.cleared());
    assertEquals(2, index.size());
    assertEquals(2, overlap(OTHER, plainLocal(range(1, 32), 16)).device());
    assertEquals(RankOverlap.NONE, overlap(R1, plainLocal(range(1, 32), 16)));
  }

  @Test
  void sglangPageMatchesTheDynamoKnownAnswer() throws Exception {
    assertEquals(1, apply(R0, 4, KvEventDecoder.decode(hex(WireVectors.V43_ARRAY))).storedBlocks());
    long local = Long.parseUnsignedLong("14643705804678351452");
    assertEquals(local, index.dump().get(0).localHash());
    assertEquals(1, overlap(R0, new long[] {local}).device());
  }

  @Test
  void childStoreExtendsItsParentAndUnknownParentIsRejected() {
    apply(R0, 4, batch(stored(new long[] {10, 11}, null, range(1, 8), 4, null, null)));
    ApplyStats child =
        apply(R0, 4, batch(stored(new long[] {12}, 11L, range(9, 12), 4, null, null)));
    assertEquals(1, child.storedBlocks());
    assertEquals(3, overlap(R0, plainLocal(range(1, 12), 4)).device());
    ApplyStats orphan =
        apply(R0, 4, batch(stored(new long[] {20}, 999L, range(9, 12), 4, null, null)));
    assertEquals(new ApplyStats(0, 0, 0, 1, 0, 0), orphan);
    assertEquals(3, index.size());
  }

  @Test
  void blockSizeMismatchIndexesNothing() throws Exception {
    ApplyStats s = apply(R0, 32, KvEventDecoder.decode(hex(WireVectors.V41_STORED)));
    assertEquals(new ApplyStats(0, 0, 0, 0, 1, 2), s);
    assertEquals(0, index.size());
  }

  @Test
  void shortTokenIdsIndexOnlyTheCompleteLeadingBlocks() {
    ApplyStats s =
        apply(R0, 16, batch(stored(new long[] {H1, H2}, null, range(1, 24), 16, null, null)));
    assertEquals(new ApplyStats(1, 0, 0, 0, 0, 1), s);
    assertEquals(1, overlap(R0, plainLocal(range(1, 32), 16)).device());
    assertEquals(H1, index.dump().get(0).externalHash());
  }

  @Test
  void nonLocalLocalityIsDropped() {
    int[] t = range(1, 4);
    assertEquals(
        2,
        apply(
                R0,
                4,
                batch(
                    stored(new long[] {1}, null, t, 4, null, "REMOTE"),
                    stored(new long[] {2}, null, t, 4, null, "SOMEWHERE")))
            .droppedEvents());
    assertEquals(0, index.size());
    assertEquals(
        1, apply(R0, 4, batch(stored(new long[] {3}, null, t, 4, null, "LOCAL"))).storedBlocks());
    ApplyStats rm = apply(R0, 4, batch(new BlockRemoved(new long[] {3}, null, null, "REMOTE")));
    assertEquals(1, rm.droppedEvents());
    assertEquals(1, index.size());
  }

  @Test
  void cpuMediumLandsOnTheHostTierAndIsRemovedThere() {
    apply(R0, 4, batch(stored(new long[] {5, 6}, null, range(1, 8), 4, "CPU", null)));
    RankOverlap o = overlap(R0, plainLocal(range(1, 8), 4));
    assertEquals(new RankOverlap(0, 2, 0, 0), o);
    apply(R0, 4, batch(new BlockRemoved(new long[] {6}, "GPU", null, null)));
    assertEquals(2, index.size());
    apply(R0, 4, batch(new BlockRemoved(new long[] {6}, "CPU", null, null)));
    assertEquals(new RankOverlap(0, 1, 0, 0), overlap(R0, plainLocal(range(1, 8), 4)));
  }

  @Test
  void duplicateHashesIncludingTheParentAreANoOp() {
    apply(R0, 4, batch(stored(new long[] {1}, null, range(1, 4), 4, null, null)));
    ApplyStats dup =
        apply(
            R0,
            4,
            batch(
                stored(new long[] {2, 2}, 1L, range(5, 12), 4, null, null),
                stored(new long[] {3, 1}, 1L, range(5, 12), 4, null, null)));
    assertEquals(new ApplyStats(0, 0, 0, 0, 2, 0), dup);
    long[] many = new long[40];
    Arrays.setAll(many, i -> 100 + i);
    many[39] = 100;
    assertEquals(
        1, apply(R0, 4, batch(stored(many, null, range(1, 160), 4, null, null))).droppedEvents());
    assertEquals(1, index.size());
  }

  @Test
  void loraCacheSaltAndMultimodalHashesSaltTheLocalHash() {
    long[][] mm = {null, {42L}};
    BlockStored s =
        new BlockStored(
            new long[] {1, 2},
            false,
            0,
            range(1, 8),
            4,
            null,
            "adapter-a",
            "tenant-a",
            mm,
            0,
            "full_attention",
            "LOCAL");
    apply(R0, 4, batch(s));
    long seed = BlockHasher.saltSeed("adapter-a", "tenant-a");
    long[] expected = BlockHasher.localBlockHashes(range(1, 8), 8, 4, seed, false, mm);
    assertEquals(2, overlap(R0, expected).device());
    assertEquals(RankOverlap.NONE, overlap(R0, plainLocal(range(1, 8), 4)));
    assertEquals(expected[1], index.dump().get(1).localHash());
  }

  @Test
  void eagleBigramEventsUseOverlappingWindows() throws Exception {
    byte[] payload =
        Payloads.batchOf(
            p -> {
              p.packArrayHeader(7)
                  .packString("BlockStored")
                  .packArrayHeader(2)
                  .packLong(1)
                  .packLong(2)
                  .packNil();
              p.packArrayHeader(8);
              for (int t = 1; t <= 8; t++) {
                p.packArrayHeader(2).packInt(t).packInt(t + 1);
              }
              p.packInt(4).packNil().packNil();
            });
    assertEquals(2, apply(R0, 4, KvEventDecoder.decode(payload)).storedBlocks());
    long[] expected =
        BlockHasher.localBlockHashes(range(1, 9), 9, 4, BlockHasher.CHAIN_SEED, true, null);
    assertEquals(2, overlap(R0, expected).device());
    assertFalse(Arrays.equals(expected, plainLocal(range(1, 8), 4)));
  }

  @Test
  void registeredEagleNeedsOneExtraToken() {
    ApplyStats s =
        EventApplier.apply(
            index, R0, 4, true, batch(stored(new long[] {1, 2}, null, range(1, 8), 4, null, null)));
    assertEquals(new ApplyStats(1, 0, 0, 0, 0, 1), s);
  }

  @Test
  void nonMainAttentionGroupsAreDropped() {
    BlockStored sliding =
        new BlockStored(
            new long[] {1},
            false,
            0,
            range(1, 4),
            4,
            null,
            null,
            null,
            null,
            1,
            "sliding_window",
            null);
    BlockStored group1 =
        new BlockStored(
            new long[] {2}, false, 0, range(1, 4), 4, null, null, null, null, 1, null, null);
    BlockStored mla =
        new BlockStored(
            new long[] {3},
            false,
            0,
            range(1, 4),
            4,
            null,
            null,
            null,
            null,
            1,
            "mla_attention",
            null);
    ApplyStats s =
        apply(R0, 4, batch(sliding, group1, mla, new BlockRemoved(new long[] {3}, null, 1, null)));
    assertEquals(new ApplyStats(1, 0, 0, 0, 3, 0), s);
    assertArrayEquals(
        new long[] {3}, index.dump().stream().mapToLong(StoredBlock::externalHash).toArray());
  }
}
