package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ShardedBlockIndexTest extends BlockIndexContract {

  @Override
  BlockIndex newIndex() {
    return new ShardedBlockIndex(3, PrefixChainIndex::new);
  }

  @Test
  void ranksSpreadOverShardsAndStayPut() {
    int[] perShard = new int[4];
    for (long w = 0; w < 100; w++) {
      for (int r = 0; r < 8; r++) {
        WorkerRank rank = new WorkerRank(w, r);
        int s = ShardedBlockIndex.shardOf(rank, 4);
        assertEquals(s, ShardedBlockIndex.shardOf(new WorkerRank(w, r), 4));
        perShard[s]++;
      }
    }
    for (int n : perShard) {
      assertEquals(200, n, 80, "roughly even spread");
    }
  }

  @Test
  void concurrentWritersAndReadersAgreeWithASerialIndex() throws Exception {
    ShardedBlockIndex sharded = new ShardedBlockIndex(4, PrefixChainIndex::new);
    PrefixChainIndex serial = new PrefixChainIndex();
    long[] local = new long[32];
    for (int i = 0; i < local.length; i++) {
      local[i] = 1000 + i;
    }
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        writers.add(
            pool.submit(
                () -> {
                  for (int w = thread; w < 64; w += 4) {
                    WorkerRank rank = new WorkerRank(w, 0);
                    int depth = 1 + (w % 32);
                    long[] ext = new long[depth];
                    for (int i = 0; i < depth; i++) {
                      ext[i] = w * 1_000L + i;
                    }
                    sharded.store(
                        rank,
                        StorageTier.DEVICE,
                        false,
                        0,
                        ext,
                        java.util.Arrays.copyOf(local, depth));
                  }
                }));
      }
      Future<?> reader =
          pool.submit(
              () -> {
                for (int i = 0; i < 200; i++) {
                  sharded.findMatches(local);
                }
              });
      for (Future<?> f : writers) {
        f.get(30, TimeUnit.SECONDS);
      }
      reader.get(30, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    for (int w = 0; w < 64; w++) {
      int depth = 1 + (w % 32);
      long[] ext = new long[depth];
      for (int i = 0; i < depth; i++) {
        ext[i] = w * 1_000L + i;
      }
      serial.store(
          new WorkerRank(w, 0),
          StorageTier.DEVICE,
          false,
          0,
          ext,
          java.util.Arrays.copyOf(local, depth));
    }
    assertEquals(serial.findMatches(local).ranks(), sharded.findMatches(local).ranks());
    assertEquals(serial.size(), sharded.size());
  }
}
