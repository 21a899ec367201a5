package io.kvselect.core.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ActiveLoadTest {

  private static final int BS = 4;
  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 3);

  private final MutableClock clock = new MutableClock();
  private final ActiveLoad load = new ActiveLoad(clock, Duration.ofSeconds(300), 42);

  private void add(String id, WorkerRank rank, long[] hashes, long prefill) {
    load.addRequest(id, rank, hashes, (long) hashes.length * BS, BS, null, true, prefill);
  }

  @Test
  void sharedPrefixBlocksCountOnceAndLeaveWithTheLastHolder() {
    add("r1", A, new long[] {10, 11, 12}, 0);
    add("r2", A, new long[] {10, 11, 20, 21}, 0);
    assertEquals(new RankLoad(5, 0, 2), load.load(A));

    assertTrue(load.free("r1"));
    assertEquals(new RankLoad(4, 0, 1), load.load(A));
    assertTrue(load.free("r2"));
    assertEquals(RankLoad.ZERO, load.load(A));
    assertTrue(load.hasLoad(A), "row survives its last request");
  }

  @Test
  void sameHashesOnDifferentRanksAreCountedPerRank() {
    add("r1", A, new long[] {10, 11}, 0);
    add("r2", B, new long[] {10, 11}, 0);
    assertEquals(2, load.load(A).activeDecodeBlocks());
    assertEquals(2, load.load(B).activeDecodeBlocks());
  }

  @Test
  void prefillIsAddedCompletedAndFreed() {
    add("r1", A, new long[] {1, 2}, 7);
    add("r2", A, new long[] {3}, 4);
    assertEquals(11, load.load(A).activePrefillTokens());

    assertTrue(load.markPrefillComplete("r1"));
    assertEquals(new RankLoad(3, 4, 2), load.load(A), "blocks stay active after prefill");
    assertTrue(load.markPrefillComplete("r1"), "a repeated completion is accepted");
    assertEquals(4, load.load(A).activePrefillTokens());

    assertTrue(load.free("r2"), "free implies prefill complete");
    assertEquals(new RankLoad(2, 0, 1), load.load(A));
    assertFalse(load.markPrefillComplete("nope"));
    assertFalse(load.free("r2"));
  }

  @Test
  void untrackedPrefillAddsNoLoad() {
    load.addRequest("r1", A, new long[] {1}, 4, BS, 16, false, 4);
    load.addRequest("r2", A, new long[] {2}, 4, BS, null, true, 0);
    assertEquals(new RankLoad(2, 0, 2), load.load(A));
  }

  @Test
  void outputBlockGrowsPotentialDecodeBlocksByExactlyOne() {
    long[] prompt = {1, 2, 3};
    add("r1", A, prompt, 0);
    long[] probe = {1, 2, 9};
    long before = load.potentialDecodeBlocks(A, probe, 12, BS);
    assertEquals(3 + 1, before);

    assertTrue(load.addOutputBlock("r1", null));
    assertEquals(before + 1, load.potentialDecodeBlocks(A, probe, 12, BS));
    assertEquals(4, load.load(A).activeDecodeBlocks());
    assertFalse(load.addOutputBlock("unknown", null));

    assertTrue(load.free("r1"));
    assertEquals(RankLoad.ZERO, load.load(A), "output blocks are released too");
  }

  @Test
  void potentialDecodeBlocksCountsTheUntrackedPartialBlock() {
    add("r1", A, new long[] {1, 2}, 0);
    // isl 10, bs 4: 3 request blocks, 2 tracked, both active -> only the partial block is new
    assertEquals(2 + 1, load.potentialDecodeBlocks(A, new long[] {1, 2}, 10, BS));
    // an unknown rank counts every block
    assertEquals(3, load.potentialDecodeBlocks(B, new long[] {1, 2}, 10, BS));
    assertEquals(0, load.potentialDecodeBlocks(B, new long[0], 0, BS));
  }

  @Test
  void decayFractionWeighsOnlyBlocksHeldBySoleRequest() {
    add("shared", A, new long[] {1, 2}, 0);
    add("r1", A, new long[] {1, 2, 3, 4, 5}, 0);
    assertEquals(5, load.load(A).activeDecodeBlocks());

    // r1 alone holds 3, 4, 5 and its output block: 4 blocks at 0.5 -> 2, plus shared 1, 2
    assertTrue(load.addOutputBlock("r1", 0.5));
    assertEquals(2 + 2, load.load(A).activeDecodeBlocks());

    // a new holder of block 3 restores its full weight: 2 + 1 + 3 * 0.5 = 4.5 -> 5
    add("r2", A, new long[] {3}, 0);
    assertEquals(5, load.load(A).activeDecodeBlocks());

    assertTrue(load.addOutputBlock("r1", 1.0));
    assertEquals(7, load.load(A).activeDecodeBlocks(), "fraction 1 restores full weight");
    assertTrue(load.addOutputBlock("r1", 0.0));
    assertEquals(3, load.load(A).activeDecodeBlocks(), "only blocks 1, 2 (shared) and 3 count");

    assertTrue(load.free("r1"));
    assertEquals(new RankLoad(3, 0, 2), load.load(A));
  }

  @Test
  void decayFractionOutsideUnitIntervalIsRejected() {
    add("r1", A, new long[] {1}, 0);
    for (double bad : new double[] {1.5, -0.1, Double.NaN}) {
      SelectionException e =
          assertThrows(SelectionException.class, () -> load.addOutputBlock("r1", bad));
      assertEquals(ErrorCode.BAD_REQUEST, e.code());
      assertEquals("decay_fraction must be in [0.0, 1.0]", e.getMessage());
    }
    assertEquals(1, load.load(A).activeDecodeBlocks(), "a rejected call changes nothing");
  }

  @Test
  void duplicateRequestIdIsAConflictAndChangesNothing() {
    add("r1", A, new long[] {1}, 3);
    SelectionException e =
        assertThrows(SelectionException.class, () -> add("r1", B, new long[] {2}, 5));
    assertEquals(ErrorCode.CONFLICT, e.code());
    assertEquals(new RankLoad(1, 3, 1), load.load(A));
    assertFalse(load.hasLoad(B));
    assertEquals(A, load.rankOf("r1"));
  }

  @Test
  void invalidShapeIsABadRequest() {
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> load.addRequest("r1", A, new long[] {1}, 4, 0, null, true, 0));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertEquals(0, load.size());
  }

  @Test
  void requestsExpireAbsolutelyFromAdmissionDespiteOutput() {
    add("old", A, new long[] {1, 2}, 4);
    clock.advance(Duration.ofSeconds(100));
    add("young", A, new long[] {2, 3}, 6);
    clock.advance(Duration.ofSeconds(199));
    load.addOutputBlock("old", null);
    assertEquals(List.of(), load.expire());

    clock.advance(Duration.ofSeconds(1));
    assertEquals(List.of("old"), load.expire());
    assertEquals(new RankLoad(2, 6, 1), load.load(A));
    assertNull(load.rankOf("old"));
    assertFalse(load.free("old"));

    clock.advance(Duration.ofSeconds(100));
    assertEquals(List.of("young"), load.expire());
    assertEquals(RankLoad.ZERO, load.load(A));
  }

  @Test
  void removeRankDropsItsRequestsOnly() {
    add("a1", A, new long[] {1}, 2);
    add("b1", B, new long[] {1}, 3);
    add("a2", A, new long[] {2}, 0);

    assertEquals(List.of("a1", "a2"), load.removeRank(A));
    assertFalse(load.hasLoad(A));
    assertEquals(Set.of(B), load.ranks());
    assertNull(load.rankOf("a1"));
    assertFalse(load.free("a2"));
    assertEquals(new RankLoad(1, 3, 1), load.load(B));
    assertEquals(1, load.size());
    assertEquals(List.of(), load.removeRank(A));

    clock.advance(Duration.ofSeconds(400));
    assertEquals(List.of("b1"), load.expire(), "dropped requests never expire later");
  }

  @Test
  void addRankRegistersAZeroRow() {
    assertFalse(load.hasLoad(A));
    load.addRank(A);
    assertTrue(load.hasLoad(A));
    assertEquals(RankLoad.ZERO, load.load(A));
    assertEquals(Set.of(A), load.ranks());
  }

  @Test
  void afterThousandsOfBookingsAllFreedEveryRankIsIdleAgain() {
    long[] prompt = new long[256];
    for (int i = 0; i < prompt.length; i++) {
      prompt[i] = 10_000 + i;
    }
    java.util.List<WorkerRank> ranks = new java.util.ArrayList<>();
    for (int w = 1; w <= 64; w++) {
      ranks.add(new WorkerRank(w, 0));
    }
    for (int n = 0; n < 5_000; n++) {
      WorkerRank r = ranks.get(n % ranks.size());
      load.addRequest("c-" + n, r, prompt, 4096, 16, 128, true, 4096);
      load.addOutputBlock("c-" + n, 0.5);
      if (n >= 32) {
        assertTrue(load.free("c-" + (n - 32)));
      }
    }
    for (int n = 5_000 - 32; n < 5_000; n++) {
      assertTrue(load.free("c-" + n));
    }
    for (WorkerRank r : ranks) {
      assertEquals(0, load.load(r).activeDecodeBlocks(), r.toString());
      assertEquals(0, load.load(r).activeRequests(), r.toString());
      // an idle rank answers without probing a single hash (the O(1) path)
      assertEquals(
          prompt.length + 1, load.potentialDecodeBlocks(r, prompt, prompt.length * 16L + 1, 16));
    }
    assertEquals(0, load.size());
  }
}
