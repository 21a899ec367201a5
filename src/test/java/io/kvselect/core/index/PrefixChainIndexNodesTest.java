package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.hash.BlockHasher;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link PrefixChainIndex} beyond the shared contract: node reference counts (every node is freed
 * once nothing names it), external hashes equal to the chain hash, positions that a chain-hash
 * collision must not confuse, long queries, many ranks and lower-tier bitsets, and dump order.
 */
class PrefixChainIndexNodesTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);

  private static long[] seq(long... local) {
    return BlockHasher.sequenceHashes(local);
  }

  private static long[] plus(long offset, long... local) {
    long[] e = new long[local.length];
    for (int i = 0; i < local.length; i++) {
      e[i] = local[i] + offset;
    }
    return e;
  }

  private static long[] range(int from, int count) {
    long[] a = new long[count];
    for (int i = 0; i < count; i++) {
      a[i] = from + i;
    }
    return a;
  }

  @Test
  void nodesAreFreedWhenTheirLastEntryGoes() {
    PrefixChainIndex idx = new PrefixChainIndex();
    long[] local = {1, 2, 3, 4};
    idx.store(A, StorageTier.DEVICE, false, 0, plus(100, local), local);
    idx.store(B, StorageTier.DEVICE, false, 0, plus(200, 1, 2, 9), new long[] {1, 2, 9});
    assertEquals(5, idx.nodeCount());

    idx.remove(A, StorageTier.DEVICE, new long[] {104});
    assertEquals(4, idx.nodeCount());
    idx.remove(A, StorageTier.DEVICE, new long[] {102});
    assertEquals(4, idx.nodeCount(), "node 2 is still named by B, node 3 by A");
    idx.remove(A, StorageTier.DEVICE, new long[] {103});
    assertEquals(3, idx.nodeCount());
    idx.remove(B, StorageTier.DEVICE, new long[] {202, 201});
    assertEquals(3, idx.nodeCount(), "B's leaf keeps its ancestors alive");
    idx.remove(B, StorageTier.DEVICE, new long[] {209});
    assertEquals(1, idx.nodeCount(), "only A's root is left");
    idx.remove(A, StorageTier.DEVICE, new long[] {101});
    assertEquals(0, idx.nodeCount());
    assertEquals(0, idx.size());
  }

  @Test
  void removeRankAndClearWorkerFreeEveryNode() {
    PrefixChainIndex idx = new PrefixChainIndex();
    WorkerRank a1 = new WorkerRank(1, 1);
    idx.store(A, StorageTier.DEVICE, false, 0, plus(100, 1, 2, 3), new long[] {1, 2, 3});
    idx.store(A, StorageTier.HOST_PINNED, true, 103, plus(100, 4, 5), new long[] {4, 5});
    idx.store(a1, StorageTier.DISK, false, 0, plus(100, 1, 7), new long[] {1, 7});
    idx.store(B, StorageTier.DEVICE, false, 0, plus(100, 1, 2), new long[] {1, 2});
    assertEquals(6, idx.nodeCount());
    idx.removeRank(A);
    assertEquals(3, idx.nodeCount());
    idx.clearWorker(1);
    assertEquals(2, idx.nodeCount());
    idx.removeRank(B);
    assertEquals(0, idx.nodeCount());
    assertEquals(0, idx.size());
    assertTrue(idx.dump().isEmpty());
  }

  @Test
  void reusingAnExternalHashForOtherContentMovesTheEntry() {
    PrefixChainIndex idx = new PrefixChainIndex();
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {500}, new long[] {1});
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {500}, new long[] {2});
    assertEquals(1, idx.size());
    assertEquals(1, idx.nodeCount(), "the node of block 1 is freed");
    assertEquals(RankOverlap.NONE, idx.findMatches(new long[] {1}).of(A));
    assertEquals(1, idx.findMatches(new long[] {2}).of(A).device());
    idx.remove(A, StorageTier.DEVICE, new long[] {500});
    assertEquals(0, idx.size());
    assertEquals(0, idx.nodeCount());
  }

  @Test
  void sequenceHashesAsExternalHashesStoreIdempotently() {
    PrefixChainIndex idx = new PrefixChainIndex();
    long[] local = {11, 12, 13};
    idx.store(A, StorageTier.DEVICE, false, 0, seq(local), local);
    idx.store(A, StorageTier.DEVICE, false, 0, seq(local), local);
    idx.store(A, StorageTier.DEVICE, false, 0, seq(11, 12), new long[] {11, 12});
    assertEquals(3, idx.size());
    assertEquals(3, idx.nodeCount());
    assertEquals(3, idx.findMatches(local).of(A).device());
    long[] four = seq(11, 12, 13, 14);
    assertTrue(
        idx.store(A, StorageTier.DEVICE, true, four[2], new long[] {four[3]}, new long[] {14}));
    assertEquals(4, idx.findMatches(new long[] {11, 12, 13, 14}).of(A).device());
    idx.remove(A, StorageTier.DEVICE, four);
    assertEquals(0, idx.findMatches(local).size());
    assertEquals(0, idx.size());
    assertEquals(0, idx.nodeCount());
  }

  @Test
  void chainHashesAsExternalHashesCountOncePerBlock() {
    PrefixChainIndex idx = new PrefixChainIndex();
    long[] local = {21, 22};
    long[] s = seq(local);
    idx.store(A, StorageTier.DEVICE, false, 0, s, local);
    idx.store(A, StorageTier.DEVICE, false, 0, s, local);
    assertEquals(2, idx.size());
    idx.remove(A, StorageTier.DEVICE, s);
    assertEquals(0, idx.size());
    assertEquals(0, idx.nodeCount());
  }

  @Test
  void mismatchedHashArraysAreRejected() {
    PrefixChainIndex idx = new PrefixChainIndex();
    assertThrows(
        IllegalArgumentException.class,
        () -> idx.store(A, StorageTier.DEVICE, false, 0, new long[] {1, 2}, new long[] {1}));
    assertEquals(0, idx.size());
  }

  @Test
  void anEmptyStoreSucceedsAndChangesNothing() {
    PrefixChainIndex idx = new PrefixChainIndex();
    assertTrue(idx.store(A, StorageTier.DEVICE, false, 0, new long[0], new long[0]));
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {101}, new long[] {1});
    assertTrue(idx.store(A, StorageTier.DEVICE, true, 101, new long[0], new long[0]));
    assertEquals(1, idx.size());
    assertEquals(1, idx.nodeCount());
  }

  @Test
  void aRootQueryEqualToADeeperChainHashDoesNotMatch() {
    PrefixChainIndex idx = new PrefixChainIndex();
    long[] local = {1, 2};
    idx.store(A, StorageTier.DEVICE, false, 0, plus(100, local), local);
    long deeper = seq(local)[1];
    assertEquals(0, idx.findMatches(new long[] {deeper}).size());
    assertEquals(0, idx.findMatches(new long[] {deeper, 5}).size());
  }

  @Test
  void aDeeperQueryHashEqualToARootLocalHashDoesNotMatch() {
    PrefixChainIndex idx = new PrefixChainIndex();
    long collide = seq(1, 5)[1];
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {101}, new long[] {1});
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {102}, new long[] {collide});
    assertEquals(1, idx.findMatches(new long[] {1, 5}).of(A).device());
    assertEquals(1, idx.findMatches(new long[] {collide}).of(A).device());
  }

  @Test
  void queriesLongerThanTheScratchBuffers() {
    PrefixChainIndex idx = new PrefixChainIndex();
    long[] local = range(1, 150);
    idx.store(A, StorageTier.DEVICE, false, 0, plus(10_000, local), local);
    idx.store(B, StorageTier.DEVICE, false, 0, plus(20_000, range(1, 70)), range(1, 70));
    assertEquals(
        Map.of(A, new RankOverlap(150, 0, 0, 0), B, new RankOverlap(70, 0, 0, 0)),
        idx.findMatches(local).ranks());
    assertEquals(64, idx.findMatches(range(1, 64)).of(A).device());
    long[] longer = range(1, 200);
    assertEquals(150, idx.findMatches(longer).of(A).device());
    long[] mismatch = range(1, 150);
    mismatch[100] = -1;
    assertEquals(100, idx.findMatches(mismatch).of(A).device());
    assertEquals(70, idx.findMatches(mismatch).of(B).device());
  }

  @Test
  void everySlotOfTheFirstWordsScoresItsOwnChain() {
    PrefixChainIndex idx = new PrefixChainIndex();
    for (int r = 0; r < 130; r++) {
      long[] local = {1_000 + r, 2_000 + r};
      idx.store(new WorkerRank(r, 0), StorageTier.DEVICE, false, 0, plus(7, local), local);
    }
    for (int r = 0; r < 130; r++) {
      OverlapScores s = idx.findMatches(new long[] {1_000 + r, 2_000 + r});
      assertEquals(
          Map.of(new WorkerRank(r, 0), new RankOverlap(2, 0, 0, 0)), s.ranks(), "rank " + r);
    }
  }

  @Test
  void manyRanksOnALowerTierEachExtendFromTheRoot() {
    PrefixChainIndex idx = new PrefixChainIndex();
    for (int r = 0; r < 100; r++) {
      WorkerRank rank = new WorkerRank(r, 0);
      if (r % 3 == 0) {
        idx.store(rank, StorageTier.DEVICE, false, 0, new long[] {101}, new long[] {1});
        idx.store(
            rank, StorageTier.HOST_PINNED, true, 101, new long[] {102, 103}, new long[] {2, 3});
      } else {
        idx.store(
            rank, StorageTier.HOST_PINNED, false, 0, new long[] {101, 102}, new long[] {1, 2});
      }
    }
    OverlapScores s = idx.findMatches(new long[] {1, 2, 3, 4});
    assertEquals(100, s.size());
    for (int r = 0; r < 100; r++) {
      RankOverlap expected = r % 3 == 0 ? new RankOverlap(1, 2, 0, 0) : new RankOverlap(0, 2, 0, 0);
      assertEquals(expected, s.of(new WorkerRank(r, 0)), "rank " + r);
    }
  }

  @Test
  void bitsetMembershipsShrinkBackToOneRank() {
    PrefixChainIndex idx = new PrefixChainIndex();
    for (int r = 0; r < 80; r++) {
      idx.store(
          new WorkerRank(r, 0),
          StorageTier.DEVICE,
          false,
          0,
          new long[] {101, 102},
          new long[] {1, 2});
    }
    for (int r = 0; r < 80; r++) {
      if (r != 70) {
        idx.removeRank(new WorkerRank(r, 0));
      }
    }
    assertEquals(
        Map.of(new WorkerRank(70, 0), new RankOverlap(2, 0, 0, 0)),
        idx.findMatches(new long[] {1, 2}).ranks());
    idx.store(new WorkerRank(5, 0), StorageTier.DEVICE, false, 0, new long[] {101}, new long[] {1});
    assertEquals(
        Map.of(
            new WorkerRank(70, 0),
            new RankOverlap(2, 0, 0, 0),
            new WorkerRank(5, 0),
            new RankOverlap(1, 0, 0, 0)),
        idx.findMatches(new long[] {1, 2}).ranks());
    assertEquals(2, idx.nodeCount());
  }

  @Test
  void dumpListsRanksInWorkerRankOrderWithinEachDepth() {
    PrefixChainIndex idx = new PrefixChainIndex();
    WorkerRank[] ranks = {
      new WorkerRank(-3, 0),
      new WorkerRank(40, 2),
      new WorkerRank(7, 1),
      new WorkerRank(40, 1),
      new WorkerRank(Long.MAX_VALUE, 0),
      new WorkerRank(0, 5),
      new WorkerRank(7, 0)
    };
    for (WorkerRank r : ranks) {
      idx.store(r, StorageTier.DEVICE, false, 0, new long[] {101}, new long[] {1});
    }
    List<StoredBlock> dump = idx.dump();
    assertEquals(ranks.length, dump.size());
    for (int i = 1; i < dump.size(); i++) {
      assertTrue(dump.get(i - 1).rank().compareTo(dump.get(i).rank()) < 0, dump.toString());
    }
    assertEquals(new WorkerRank(-3, 0), dump.get(dump.size() - 1).rank());
  }
}
