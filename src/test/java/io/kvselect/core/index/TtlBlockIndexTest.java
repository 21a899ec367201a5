package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.hash.BlockHasher;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The {@link BlockIndex} contract (with a TTL no test reaches) plus expiry behaviour. */
class TtlBlockIndexTest extends BlockIndexContract {

  private final MutableClock clock = new MutableClock();

  @Override
  BlockIndex newIndex() {
    return new TtlBlockIndex(Duration.ofHours(1), clock);
  }

  private static long[] seq(long[] local) {
    return BlockHasher.sequenceHashes(local);
  }

  @Test
  void recordedBlocksCountUntilTheirTtl() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(120), clock);
    long[] local = {11, 12, 13};
    idx.record(A, local, seq(local));
    assertEquals(3, idx.findMatches(local).of(A).device());
    clock.advanceSeconds(119.999);
    assertEquals(3, idx.findMatches(local).of(A).device());
    clock.advanceSeconds(0.001);
    assertTrue(idx.findMatches(local).ranks().isEmpty());
    assertEquals(0, idx.size());
  }

  @Test
  void reRecordingRefreshesTheExpiry() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    long[] local = {1, 2, 3};
    idx.record(A, local, seq(local));
    clock.advanceSeconds(6);
    idx.record(A, new long[] {1, 2}, seq(new long[] {1, 2}));
    clock.advanceSeconds(6);
    assertEquals(2, idx.findMatches(local).of(A).device());
    clock.advanceSeconds(4);
    assertTrue(idx.findMatches(local).ranks().isEmpty());
  }

  @Test
  void bookingOnePromptManyTimesKeepsOneExpiryRecordPerBlock() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(120), clock);
    long[] local = new long[500];
    for (int i = 0; i < local.length; i++) {
      local[i] = 1_000 + i;
    }
    long[] seq = seq(local);
    for (int n = 0; n < 10_000; n++) {
      idx.record(A, local, seq);
      clock.advanceSeconds(0.001);
    }
    assertEquals(500, idx.liveEntries());
    assertEquals(
        500,
        idx.pendingDeadlines(),
        "one record per (rank, block), not one per booking (was 5,000,000)");
    // past the first records' check time the refreshed entries stay, each with one record again
    clock.advanceSeconds(115);
    assertEquals(500, idx.findMatches(local).of(A).device());
    assertEquals(500, idx.pendingDeadlines());
    clock.advanceSeconds(10);
    assertTrue(idx.findMatches(local).ranks().isEmpty(), "expired a TTL after the last booking");
    assertEquals(0, idx.pendingDeadlines());
    assertEquals(0, idx.liveEntries());
  }

  @Test
  void recordsOfRemovedEntriesStayWithinTheBound() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofHours(1), clock);
    for (int n = 0; n < 50_000; n++) {
      long[] local = {n};
      idx.record(A, local, seq(local));
      idx.removeRank(A);
    }
    assertEquals(0, idx.liveEntries());
    assertTrue(
        idx.pendingDeadlines() <= TtlBlockIndex.STALE_SLACK + 1,
        "stale records bounded: " + idx.pendingDeadlines());
  }

  @Test
  void expireDropsOnlyDueEntriesAndShrinksTheIndex() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    idx.record(A, new long[] {1, 2}, seq(new long[] {1, 2}));
    clock.advanceSeconds(5);
    idx.record(B, new long[] {1, 2, 3}, seq(new long[] {1, 2, 3}));
    assertEquals(0, idx.expire());
    clock.advanceSeconds(5);
    assertEquals(2, idx.expire());
    assertEquals(3, idx.size());
    OverlapScores s = idx.findMatches(new long[] {1, 2, 3});
    assertEquals(RankOverlap.NONE, s.of(A));
    assertEquals(3, s.of(B).device());
  }

  @Test
  void removedThenExpiredEntriesAreNotRemovedTwice() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    long[] local = {1, 2};
    long[] seq = seq(local);
    idx.record(A, local, seq);
    idx.remove(A, StorageTier.DEVICE, new long[] {seq[1]});
    idx.removeRank(B);
    clock.advanceSeconds(11);
    assertEquals(1, idx.expire());
    assertEquals(0, idx.size());
  }

  @Test
  void recordAfterExpiryStartsAFreshChain() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    long[] local = {1, 2};
    idx.record(A, local, seq(local));
    clock.advanceSeconds(20);
    idx.record(A, local, seq(local));
    assertEquals(2, idx.findMatches(local).of(A).device());
    assertEquals(2, idx.size());
  }

  @Test
  void mergeTakesThePerRankMaxOfDeviceDepth() {
    PrefixChainIndex primary = new PrefixChainIndex();
    TtlBlockIndex side = new TtlBlockIndex(Duration.ofSeconds(5), clock);
    long[] local = {1, 2, 3, 4};
    storeRoot(primary, A, StorageTier.DEVICE, 1);
    storeAfter(primary, A, StorageTier.HOST_PINNED, 1, 2, 3);
    storeRoot(primary, B, StorageTier.DEVICE, 1, 2, 3);
    side.record(A, new long[] {1, 2}, seq(new long[] {1, 2}));
    side.record(B, new long[] {1}, seq(new long[] {1}));
    side.record(A1, local, seq(local));

    OverlapScores merged =
        OverlapMerge.maxDevice(primary.findMatches(local), side.findMatches(local));
    assertEquals(new RankOverlap(2, 1, 0, 0), merged.of(A));
    assertEquals(new RankOverlap(3, 0, 0, 0), merged.of(B));
    assertEquals(new RankOverlap(4, 0, 0, 0), merged.of(A1));

    clock.advanceSeconds(5);
    OverlapScores later =
        OverlapMerge.maxDevice(primary.findMatches(local), side.findMatches(local));
    assertEquals(primary.findMatches(local), later);
  }

  @Test
  void mergeKeepsCumulativeTierBoundaries() {
    OverlapScores p = new OverlapScores(java.util.Map.of(A, new RankOverlap(1, 2, 1, 1)));
    OverlapScores s = new OverlapScores(java.util.Map.of(A, new RankOverlap(4, 0, 0, 0)));
    assertEquals(new RankOverlap(4, 0, 0, 1), OverlapMerge.maxDevice(p, s).of(A));
    OverlapScores s2 = new OverlapScores(java.util.Map.of(A, new RankOverlap(9, 0, 0, 0)));
    assertEquals(new RankOverlap(9, 0, 0, 0), OverlapMerge.maxDevice(p, s2).of(A));
  }
}
