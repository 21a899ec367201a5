package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every {@link ShardedBlockIndex} operation releases the locks it takes: after the call returns on
 * this thread, a writer on another thread gets through (bounded by a timeout, so a lock left held
 * fails the test instead of hanging it). Also the shard function's stability.
 */
class ShardedBlockIndexLockTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);

  private ExecutorService other;

  @BeforeEach
  void startOtherThread() {
    other =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "other-writer");
              t.setDaemon(true);
              return t;
            });
  }

  @AfterEach
  void stopOtherThread() {
    other.shutdownNow();
  }

  private void assertAnotherThreadCanWrite(ShardedBlockIndex idx, String after) throws Exception {
    long before = idx.size();
    boolean stored =
        other
            .submit(
                () ->
                    idx.store(
                        B,
                        StorageTier.DEVICE,
                        false,
                        0,
                        new long[] {before + 5_000},
                        new long[] {before + 5_000}))
            .get(20, TimeUnit.SECONDS);
    assertTrue(stored, after);
    other
        .submit(() -> idx.remove(B, StorageTier.DEVICE, new long[] {before + 5_000}))
        .get(20, TimeUnit.SECONDS);
  }

  private void check(int shards, String name, Consumer<ShardedBlockIndex> call) throws Exception {
    ShardedBlockIndex idx = new ShardedBlockIndex(shards, PrefixChainIndex::new);
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {101, 102}, new long[] {1, 2});
    call.accept(idx);
    assertAnotherThreadCanWrite(idx, name + " on " + shards + " shard(s)");
  }

  @Test
  void everyOperationReleasesItsLocks() throws Exception {
    for (int shards : new int[] {1, 3}) {
      check(
          shards,
          "store",
          i -> i.store(A, StorageTier.DEVICE, true, 102, new long[] {103}, new long[] {3}));
      check(shards, "remove", i -> i.remove(A, StorageTier.DEVICE, new long[] {102}));
      check(shards, "clearWorker", i -> i.clearWorker(1));
      check(shards, "removeRank", i -> i.removeRank(A));
      check(shards, "findMatches", i -> i.findMatches(new long[] {1, 2}));
      check(shards, "size", ShardedBlockIndex::size);
      check(shards, "dump", ShardedBlockIndex::dump);
    }
  }

  @Test
  void writesStillApplyAfterEachOperation() throws Exception {
    ShardedBlockIndex idx = new ShardedBlockIndex(1, PrefixChainIndex::new);
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {101, 102}, new long[] {1, 2});
    idx.remove(A, StorageTier.DEVICE, new long[] {102});
    assertEquals(1, idx.size());
    idx.dump();
    idx.removeRank(A);
    idx.clearWorker(2);
    assertEquals(0, idx.size());
  }

  @Test
  void atLeastOneShard() {
    assertThrows(
        IllegalArgumentException.class, () -> new ShardedBlockIndex(0, PrefixChainIndex::new));
    assertThrows(
        IllegalArgumentException.class, () -> new ShardedBlockIndex(-1, PrefixChainIndex::new));
    ShardedBlockIndex one = new ShardedBlockIndex(1, PrefixChainIndex::new);
    assertEquals(1, one.shardCount());
    assertEquals(0, one.shardOf(new WorkerRank(12345, 7)));
    assertEquals(5, new ShardedBlockIndex(5, PrefixChainIndex::new).shardCount());
  }

  /**
   * The rank-to-shard mapping decides which writer thread owns a rank, so a change to it must be
   * deliberate: these values pin the mix.
   */
  @Test
  void shardOfIsPinned() {
    int[] got = new int[12];
    for (int i = 0; i < got.length; i++) {
      got[i] = ShardedBlockIndex.shardOf(new WorkerRank(i / 3 * 1_000_003L, i % 3), 1_000_003);
    }
    assertEquals(Arrays.toString(PINNED), Arrays.toString(got));
    assertEquals(
        ShardedBlockIndex.shardOf(new WorkerRank(-1, 0), 7),
        new ShardedBlockIndex(7, PrefixChainIndex::new).shardOf(new WorkerRank(-1, 0)));
    for (long w = -50; w < 50; w++) {
      int s = ShardedBlockIndex.shardOf(new WorkerRank(w, 3), 7);
      assertTrue(s >= 0 && s < 7, "shard " + s);
    }
  }

  private static final int[] PINNED = {
    0, 533536, 761974, 246695, 172397, 523047, 746092, 434810, 788120, 717572, 269019, 653391
  };
}
