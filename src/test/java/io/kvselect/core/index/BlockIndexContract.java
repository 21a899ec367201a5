package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Behaviour every {@link BlockIndex} must have. Each implementation's test extends this class.
 * External hashes in these tests are the local hashes plus 1000, so failures read easily.
 */
abstract class BlockIndexContract {

  static final WorkerRank A = new WorkerRank(1, 0);
  static final WorkerRank B = new WorkerRank(2, 0);
  static final WorkerRank A1 = new WorkerRank(1, 1);

  abstract BlockIndex newIndex();

  static long[] ext(long... local) {
    long[] e = new long[local.length];
    for (int i = 0; i < local.length; i++) {
      e[i] = local[i] + 1000;
    }
    return e;
  }

  static boolean storeRoot(BlockIndex idx, WorkerRank r, StorageTier t, long... local) {
    return idx.store(r, t, false, 0, ext(local), local);
  }

  static boolean storeAfter(
      BlockIndex idx, WorkerRank r, StorageTier t, long parentLocal, long... local) {
    return idx.store(r, t, true, parentLocal + 1000, ext(local), local);
  }

  static long[] q(long... local) {
    return local;
  }

  @Test
  void fullPartialAndMiss() {
    BlockIndex idx = newIndex();
    assertTrue(storeRoot(idx, A, StorageTier.DEVICE, 1, 2, 3));
    assertEquals(3, idx.findMatches(q(1, 2, 3)).of(A).device());
    assertEquals(3, idx.findMatches(q(1, 2, 3, 4, 5)).of(A).device());
    assertEquals(2, idx.findMatches(q(1, 2, 9)).of(A).device());
    assertTrue(idx.findMatches(q(9, 1, 2)).ranks().isEmpty());
    assertTrue(idx.findMatches(q()).ranks().isEmpty());
    assertEquals(3, idx.size());
  }

  @Test
  void positionMatters() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    assertTrue(idx.findMatches(q(2)).ranks().isEmpty());
  }

  @Test
  void twoRanksShareAPrefix() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2, 3);
    storeRoot(idx, B, StorageTier.DEVICE, 1, 2);
    OverlapScores s = idx.findMatches(q(1, 2, 3));
    assertEquals(Map.of(A, new RankOverlap(3, 0, 0, 0), B, new RankOverlap(2, 0, 0, 0)), s.ranks());
  }

  @Test
  void divergentBranches() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2, 3);
    storeAfter(idx, B, StorageTier.DEVICE, 0, 0);
    storeRoot(idx, B, StorageTier.DEVICE, 1, 2, 4, 5);
    assertEquals(3, idx.findMatches(q(1, 2, 3)).of(A).device());
    assertEquals(2, idx.findMatches(q(1, 2, 3)).of(B).device());
    assertEquals(2, idx.findMatches(q(1, 2, 4, 5)).of(A).device());
    assertEquals(4, idx.findMatches(q(1, 2, 4, 5)).of(B).device());
  }

  @Test
  void extendingFromAParent() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    assertTrue(storeAfter(idx, A, StorageTier.DEVICE, 2, 3, 4));
    assertEquals(4, idx.findMatches(q(1, 2, 3, 4)).of(A).device());
    assertEquals(4, idx.size());
  }

  @Test
  void unknownParentRejectsTheWholeStore() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    assertFalse(storeAfter(idx, A, StorageTier.DEVICE, 7, 3, 4));
    assertFalse(storeAfter(idx, B, StorageTier.DEVICE, 2, 3, 4));
    assertEquals(2, idx.size());
    assertTrue(idx.findMatches(q(3, 4)).ranks().isEmpty());
    assertEquals(RankOverlap.NONE, idx.findMatches(q(1, 2, 3)).of(B));
  }

  @Test
  void removingAMiddleBlockCutsTheDepth() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2, 3, 4);
    storeRoot(idx, B, StorageTier.DEVICE, 1, 2, 3, 4);
    idx.remove(A, StorageTier.DEVICE, ext(3));
    idx.remove(A, StorageTier.DEVICE, new long[] {424242});
    OverlapScores s = idx.findMatches(q(1, 2, 3, 4));
    assertEquals(2, s.of(A).device());
    assertEquals(4, s.of(B).device());
    assertEquals(7, idx.size());
    idx.remove(A, StorageTier.DEVICE, ext(1));
    assertEquals(RankOverlap.NONE, idx.findMatches(q(1, 2, 3, 4)).of(A));
  }

  @Test
  void staleDescendantsOfAnotherRankDoNotLeakIntoTheScore() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2, 3);
    storeRoot(idx, B, StorageTier.DEVICE, 1, 2, 3);
    idx.remove(A, StorageTier.DEVICE, ext(2));
    idx.remove(B, StorageTier.DEVICE, ext(1));
    OverlapScores s = idx.findMatches(q(1, 2, 3));
    assertEquals(Map.of(A, new RankOverlap(1, 0, 0, 0)), s.ranks());
  }

  @Test
  void clearWorkerRemovesAllRanksAndTiers() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    storeRoot(idx, A1, StorageTier.DEVICE, 1, 2);
    storeAfter(idx, A, StorageTier.HOST_PINNED, 2, 3);
    storeRoot(idx, A1, StorageTier.DISK, 5);
    storeRoot(idx, B, StorageTier.DEVICE, 1);
    idx.clearWorker(1);
    OverlapScores s = idx.findMatches(q(1, 2, 3));
    assertEquals(Map.of(B, new RankOverlap(1, 0, 0, 0)), s.ranks());
    assertTrue(idx.findMatches(q(5)).ranks().isEmpty());
    assertEquals(1, idx.size());
    assertTrue(storeRoot(idx, A, StorageTier.DEVICE, 1, 2, 3));
    assertEquals(3, idx.findMatches(q(1, 2, 3)).of(A).device());
  }

  @Test
  void removeRankLeavesOtherRanksOfTheWorker() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    storeRoot(idx, A1, StorageTier.DEVICE, 1, 2);
    storeRoot(idx, A, StorageTier.HOST_PINNED, 7);
    idx.removeRank(A);
    assertEquals(Map.of(A1, new RankOverlap(2, 0, 0, 0)), idx.findMatches(q(1, 2)).ranks());
    assertTrue(idx.findMatches(q(7)).ranks().isEmpty());
    assertEquals(2, idx.size());
    idx.removeRank(new WorkerRank(99, 0));
    assertEquals(2, idx.size());
  }

  @Test
  void lowerTiersReportExtensions() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 11, 12);
    assertTrue(storeAfter(idx, A, StorageTier.HOST_PINNED, 12, 13));
    RankOverlap a = idx.findMatches(q(11, 12, 13, 14)).of(A);
    assertEquals(new RankOverlap(2, 1, 0, 0), a);

    BlockIndex replay = newIndex();
    List<StoredBlock> dump = idx.dump();
    assertEquals(StorageTier.DEVICE, dump.get(0).tier());
    replayInto(replay, dump);
    assertEquals(new RankOverlap(2, 1, 0, 0), replay.findMatches(q(11, 12, 13, 14)).of(A));
    assertTrue(storeAfter(replay, A, StorageTier.DISK, 13, 14));
    assertEquals(new RankOverlap(2, 1, 1, 0), replay.findMatches(q(11, 12, 13, 14)).of(A));
  }

  @Test
  void eachTierExtendsTheCumulativeDepth() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1);
    storeAfter(idx, A, StorageTier.HOST_PINNED, 1, 2);
    storeAfter(idx, A, StorageTier.DISK, 2, 3, 4);
    storeAfter(idx, A, StorageTier.EXTERNAL, 4, 5);
    storeRoot(idx, A, StorageTier.HOST_PINNED, 1, 2);
    assertEquals(new RankOverlap(1, 1, 2, 1), idx.findMatches(q(1, 2, 3, 4, 5, 6)).of(A));
    assertEquals(new RankOverlap(1, 1, 0, 0), idx.findMatches(q(1, 2, 9)).of(A));
  }

  @Test
  void aRankWithoutDeviceHitEntersLowerTiersFromTheRoot() {
    BlockIndex idx = newIndex();
    storeRoot(idx, B, StorageTier.DEVICE, 1);
    storeRoot(idx, A, StorageTier.HOST_PINNED, 1, 2);
    storeAfter(idx, A, StorageTier.EXTERNAL, 2, 3);
    OverlapScores s = idx.findMatches(q(1, 2, 3));
    assertEquals(new RankOverlap(0, 2, 0, 1), s.of(A));
    assertEquals(new RankOverlap(1, 0, 0, 0), s.of(B));
  }

  @Test
  void lowerTierBlocksBehindAGapDoNotCount() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    storeAfter(idx, A, StorageTier.HOST_PINNED, 2, 3);
    idx.remove(A, StorageTier.DEVICE, ext(2));
    assertEquals(new RankOverlap(1, 0, 0, 0), idx.findMatches(q(1, 2, 3)).of(A));
  }

  @Test
  void aDeviceStoreCannotHangOffALowerTierParent() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.HOST_PINNED, 1);
    assertFalse(storeAfter(idx, A, StorageTier.DEVICE, 1, 2));
    assertEquals(1, idx.size());
  }

  @Test
  void dumpRoundTrip() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2, 3);
    storeRoot(idx, B, StorageTier.DEVICE, 1, 2, 4);
    storeRoot(idx, A1, StorageTier.DEVICE, 1);
    storeAfter(idx, A1, StorageTier.HOST_PINNED, 1, 2, 3);
    storeAfter(idx, B, StorageTier.DISK, 4, 5);
    List<StoredBlock> dump = idx.dump();
    assertEquals(idx.size(), dump.size());
    assertParentsFirstDeviceFirst(dump);

    BlockIndex replay = newIndex();
    replayInto(replay, dump);
    assertEquals(idx.size(), replay.size());
    for (long[] query : new long[][] {q(1, 2, 3), q(1, 2, 4, 5), q(1, 9), q(2)}) {
      assertEquals(idx.findMatches(query).ranks(), replay.findMatches(query).ranks());
    }
    assertEquals(dump, replay.dump());
  }

  @Test
  void dumpAfterRemovalStillReplaysToTheSameScores() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2, 3, 4);
    storeAfter(idx, A, StorageTier.HOST_PINNED, 4, 5);
    idx.remove(A, StorageTier.DEVICE, ext(2));
    BlockIndex replay = newIndex();
    replayInto(replay, idx.dump());
    for (long[] query : new long[][] {q(1, 2, 3, 4, 5), q(1), q(3)}) {
      assertEquals(idx.findMatches(query).ranks(), replay.findMatches(query).ranks());
    }
  }

  @Test
  void restoringTheSameBlocksIsIdempotent() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    assertEquals(2, idx.size());
    idx.remove(A, StorageTier.DEVICE, ext(1, 2));
    assertEquals(0, idx.size());
    assertTrue(idx.findMatches(q(1, 2)).ranks().isEmpty());
    assertTrue(idx.dump().isEmpty());
  }

  @Test
  void manyRanksSharingAPrefix() {
    BlockIndex idx = newIndex();
    for (int r = 0; r < 200; r++) {
      long[] chain = new long[1 + r % 7];
      for (int i = 0; i < chain.length; i++) {
        chain[i] = i + 1;
      }
      storeRoot(idx, new WorkerRank(r, 0), StorageTier.DEVICE, chain);
    }
    idx.remove(new WorkerRank(5, 0), StorageTier.DEVICE, ext(2));
    OverlapScores s = idx.findMatches(q(1, 2, 3, 4, 5, 6, 7, 8));
    assertEquals(200, s.ranks().size());
    for (int r = 0; r < 200; r++) {
      int expected = r == 5 ? 1 : 1 + r % 7;
      assertEquals(expected, s.of(new WorkerRank(r, 0)).device(), "rank " + r);
    }
  }

  @Test
  void externalHashesAreTheRanksOwnNamesOfTheMatchedBlocks() {
    BlockIndex idx = newIndex();
    long[] local = {1, 2, 3};
    long[] router = io.kvselect.core.hash.BlockHasher.sequenceHashes(local);
    long[] bigU64 = {0x8000000000000000L, 0xFFFFFFFFFFFFFFFFL, 0xC0FFEE0000000001L};
    assertTrue(storeRoot(idx, A, StorageTier.DEVICE, local));
    assertTrue(idx.store(B, StorageTier.DEVICE, false, 0, bigU64, local));
    assertTrue(idx.store(A1, StorageTier.DEVICE, false, 0, router, local));
    long[] query = q(1, 2, 3, 4);
    assertArrayEquals(ext(1, 2, 3), idx.externalHashes(A, query, 10));
    assertArrayEquals(bigU64, idx.externalHashes(B, query, 10));
    assertArrayEquals(router, idx.externalHashes(A1, query, 10));
    for (WorkerRank r : List.of(A, B, A1)) {
      assertEquals(idx.findMatches(query).of(r).device(), idx.externalHashes(r, query, 10).length);
    }
  }

  @Test
  void externalHashesStopAtTheDepthTheQueryAndTheFirstMissingBlock() {
    BlockIndex idx = newIndex();
    long[] big = {
      0x9000000000000001L, 0x9000000000000002L, 0x9000000000000003L, 0x9000000000000004L
    };
    idx.store(A, StorageTier.DEVICE, false, 0, big, q(1, 2, 3, 4));
    long[] query = q(1, 2, 3, 4);
    assertArrayEquals(Arrays.copyOf(big, 2), idx.externalHashes(A, query, 2));
    assertArrayEquals(Arrays.copyOf(big, 1), idx.externalHashes(A, query, 1));
    assertArrayEquals(new long[0], idx.externalHashes(A, query, 0));
    assertArrayEquals(new long[0], idx.externalHashes(A, query, -1));
    assertArrayEquals(Arrays.copyOf(big, 2), idx.externalHashes(A, q(1, 2), 4));
    assertArrayEquals(Arrays.copyOf(big, 2), idx.externalHashes(A, q(1, 2, 9, 4), 4));
    assertArrayEquals(new long[0], idx.externalHashes(A, q(2, 3), 4));
    assertArrayEquals(new long[0], idx.externalHashes(A, q(), 4));
    assertArrayEquals(new long[0], idx.externalHashes(B, query, 4));
    idx.remove(A, StorageTier.DEVICE, new long[] {big[2]});
    assertArrayEquals(Arrays.copyOf(big, 2), idx.externalHashes(A, query, 4));
    idx.remove(A, StorageTier.DEVICE, new long[] {big[0]});
    assertArrayEquals(new long[0], idx.externalHashes(A, query, 4));
  }

  @Test
  void externalHashesOfAPrefixSharedWithAnotherRankAndExtendedFromAParent() {
    BlockIndex idx = newIndex();
    storeRoot(idx, B, StorageTier.DEVICE, 1, 2, 3, 4);
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    assertArrayEquals(ext(1, 2), idx.externalHashes(A, q(1, 2, 3, 4), 4));
    assertTrue(storeAfter(idx, A, StorageTier.DEVICE, 2, 3));
    assertArrayEquals(ext(1, 2, 3), idx.externalHashes(A, q(1, 2, 3, 4), 4));
    assertArrayEquals(ext(1, 2, 3, 4), idx.externalHashes(B, q(1, 2, 3, 4), 4));
  }

  @Test
  void externalHashesCoverTheDeviceTierOnly() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 11, 12);
    assertTrue(storeAfter(idx, A, StorageTier.HOST_PINNED, 12, 13));
    storeRoot(idx, B, StorageTier.HOST_PINNED, 11, 12, 13);
    assertArrayEquals(ext(11, 12), idx.externalHashes(A, q(11, 12, 13), 3));
    assertArrayEquals(new long[0], idx.externalHashes(B, q(11, 12, 13), 3));
  }

  @Test
  void externalHashesFollowARestoreUnderAnotherName() {
    BlockIndex idx = newIndex();
    long[] local = {5, 6};
    long[] router = io.kvselect.core.hash.BlockHasher.sequenceHashes(local);
    long[] opaque = {0xA000000000000005L, 0xA000000000000006L};
    idx.store(A, StorageTier.DEVICE, false, 0, router, local);
    idx.remove(A, StorageTier.DEVICE, router);
    idx.store(A, StorageTier.DEVICE, false, 0, opaque, local);
    assertArrayEquals(opaque, idx.externalHashes(A, local, 2));
    idx.remove(A, StorageTier.DEVICE, opaque);
    assertArrayEquals(new long[0], idx.externalHashes(A, local, 2));
    idx.store(A, StorageTier.DEVICE, false, 0, router, local);
    assertArrayEquals(router, idx.externalHashes(A, local, 2));
  }

  @Test
  void externalHashesOfARemovedRankOrWorkerAreEmpty() {
    BlockIndex idx = newIndex();
    storeRoot(idx, A, StorageTier.DEVICE, 1, 2);
    storeRoot(idx, A1, StorageTier.DEVICE, 1, 2);
    storeRoot(idx, B, StorageTier.DEVICE, 1, 2);
    idx.removeRank(A);
    assertArrayEquals(new long[0], idx.externalHashes(A, q(1, 2), 2));
    assertArrayEquals(ext(1, 2), idx.externalHashes(A1, q(1, 2), 2));
    idx.clearWorker(1);
    assertArrayEquals(new long[0], idx.externalHashes(A1, q(1, 2), 2));
    assertArrayEquals(ext(1, 2), idx.externalHashes(B, q(1, 2), 2));
  }

  static void replayInto(BlockIndex target, List<StoredBlock> dump) {
    for (StoredBlock b : dump) {
      assertTrue(
          target.store(
              b.rank(),
              b.tier(),
              b.hasParent(),
              b.parentExternalHash(),
              new long[] {b.externalHash()},
              new long[] {b.localHash()}),
          b.toString());
    }
  }

  private static void assertParentsFirstDeviceFirst(List<StoredBlock> dump) {
    boolean lowerSeen = false;
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (StoredBlock b : dump) {
      lowerSeen |= b.tier() != StorageTier.DEVICE;
      assertFalse(lowerSeen && b.tier() == StorageTier.DEVICE, "device entry after lower tier");
      if (b.hasParent()) {
        boolean parentSeen = false;
        for (StorageTier t : StorageTier.values()) {
          parentSeen |= seen.contains(b.rank() + "/" + t + "/" + b.parentExternalHash());
        }
        assertTrue(parentSeen, "parent after child: " + b);
      }
      seen.add(b.rank() + "/" + b.tier() + "/" + b.externalHash());
    }
  }
}
