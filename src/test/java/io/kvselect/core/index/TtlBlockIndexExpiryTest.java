package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.hash.BlockHasher;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link TtlBlockIndex} deadlines across clearWorker, removeRank and empty stores. */
class TtlBlockIndexExpiryTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank A1 = new WorkerRank(1, 1);
  private static final WorkerRank B = new WorkerRank(2, 0);

  private final MutableClock clock = new MutableClock();

  private static long[] seq(long... local) {
    return BlockHasher.sequenceHashes(local);
  }

  @Test
  void clearingOneWorkerKeepsTheOtherWorkersDeadlines() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    long[] local = {1, 2, 3};
    idx.record(A, local, seq(local));
    idx.record(A1, local, seq(local));
    idx.record(B, local, seq(local));
    idx.clearWorker(1);
    assertEquals(3, idx.size());
    assertEquals(3, idx.findMatches(local).of(B).device());
    clock.advanceSeconds(10);
    assertEquals(3, idx.expire(), "B's blocks still expire");
    assertEquals(0, idx.size());
    assertTrue(idx.findMatches(local).ranks().isEmpty());
  }

  @Test
  void removingARankKeepsTheOtherRanksDeadlines() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    long[] local = {1, 2};
    idx.record(A, local, seq(local));
    idx.record(A1, local, seq(local));
    idx.removeRank(A);
    clock.advanceSeconds(10);
    assertEquals(2, idx.expire());
    assertEquals(0, idx.size());
  }

  @Test
  void deadlinesOfARemovedRankAreSkippedWhenDue() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    long[] local = {1, 2};
    idx.record(A, local, seq(local));
    idx.removeRank(A);
    idx.record(B, new long[] {7}, seq(7));
    clock.advanceSeconds(10);
    assertEquals(1, idx.expire());
    assertEquals(0, idx.size());
  }

  @Test
  void aClearedWorkerRecordedAgainGetsFreshDeadlines() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    long[] local = {1, 2};
    idx.record(A, local, seq(local));
    clock.advanceSeconds(6);
    idx.clearWorker(1);
    idx.record(A, local, seq(local));
    clock.advanceSeconds(6);
    assertEquals(0, idx.expire(), "the first deadlines no longer apply");
    assertEquals(2, idx.findMatches(local).of(A).device());
    clock.advanceSeconds(4);
    assertEquals(2, idx.expire());
  }

  @Test
  void ttlMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new TtlBlockIndex(Duration.ZERO, clock));
    assertThrows(
        IllegalArgumentException.class, () -> new TtlBlockIndex(Duration.ofSeconds(-1), clock));
    TtlBlockIndex shortest = new TtlBlockIndex(Duration.ofMillis(1), clock);
    shortest.record(A, new long[] {1}, seq(1));
    assertEquals(1, shortest.size());
    clock.advance(Duration.ofMillis(1));
    assertEquals(0, shortest.size());
  }

  @Test
  void emptyAndRejectedStoresAddNoDeadline() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    assertTrue(idx.store(A, StorageTier.DEVICE, false, 0, new long[0], new long[0]));
    assertEquals(false, idx.store(A, StorageTier.DEVICE, true, 99, new long[] {5}, new long[] {5}));
    clock.advanceSeconds(10);
    assertEquals(0, idx.expire());
    assertEquals(0, idx.size());
  }

  @Test
  void removedBlocksOfOneTierKeepTheOtherTiersDeadlines() {
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {101}, new long[] {1});
    idx.store(A, StorageTier.HOST_PINNED, true, 101, new long[] {102}, new long[] {2});
    idx.remove(A, StorageTier.DISK, new long[] {102});
    idx.remove(B, StorageTier.DEVICE, new long[] {101});
    assertEquals(new RankOverlap(1, 1, 0, 0), idx.findMatches(new long[] {1, 2}).of(A));
    idx.remove(A, StorageTier.HOST_PINNED, new long[] {102});
    clock.advanceSeconds(10);
    assertEquals(1, idx.expire());
    assertEquals(0, idx.size());
  }
}
