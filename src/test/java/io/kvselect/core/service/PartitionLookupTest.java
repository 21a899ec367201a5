package io.kvselect.core.service;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A partition's overlap result stays the result of its own query when the same thread (an event
 * loop) runs another request's lookup before the first request, resumed after an asynchronous
 * step, reads it: the guard for any lookup that reuses per-thread scratch (the index's own).
 */
class PartitionLookupTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);
  private static final long[] X = {11, 12, 13, 14};
  private static final long[] Y = {21, 22, 23};

  private static Partition eventPartition() {
    ServiceSettings s =
        new ServiceSettings(
            RouterConfig.DEFAULTS,
            null,
            Duration.ofSeconds(120),
            4096,
            1L << 20,
            () -> new ShardedBlockIndex(2, PrefixChainIndex::new));
    Partition p =
        new Partition(
            new PartitionKey(null, null), s, new MutableClock(), QueueConfig.defaults("fcfs"));
    p.primary.store(A, StorageTier.DEVICE, false, 0, new long[] {101, 102, 103, 104}, X);
    p.primary.store(B, StorageTier.DEVICE, false, 0, new long[] {201, 202, 203}, Y);
    return p;
  }

  @Test
  void interleavedLookupsOnOneEventLoopKeepTheirOwnOverlap() throws Exception {
    Partition p = eventPartition();
    ExecutorService loop = Executors.newSingleThreadExecutor();
    try {
      // request 1 looks up X, then waits (an async hop); request 2 looks up Y on the same thread
      // before request 1 resumes and reads its result
      CompletableFuture<Void> hop = new CompletableFuture<>();
      CompletableFuture<OverlapScores> first =
          CompletableFuture.supplyAsync(() -> p.eventOverlap(X), loop)
              .thenCombineAsync(hop, (scores, v) -> scores, loop);
      OverlapScores second =
          CompletableFuture.supplyAsync(() -> p.eventOverlap(Y), loop).get(10, TimeUnit.SECONDS);
      hop.complete(null);
      OverlapScores x = first.get(10, TimeUnit.SECONDS);
      assertEquals(4, x.of(A).device());
      assertEquals(RankOverlap.NONE, x.of(B));
      assertEquals(1, x.size());
      assertEquals(3, second.of(B).device());
      assertEquals(RankOverlap.NONE, second.of(A));
      assertEquals(1, second.size());
      // and what the allocating lookup answers, rank for rank
      assertEquals(p.primary.findMatches(X).ranks(), x.ranks());
      assertEquals(p.primary.findMatches(Y).ranks(), second.ranks());
    } finally {
      loop.shutdownNow();
    }
  }

  @Test
  void aLookupAfterAnotherOnTheSameThreadLeavesTheFirstResultAlone() {
    Partition p = eventPartition();
    OverlapScores x = p.eventOverlap(X);
    OverlapScores partial = p.eventOverlap(new long[] {11, 12, 99});
    OverlapScores none = p.eventOverlap(new long[] {7});
    assertEquals(4, x.of(A).device());
    assertEquals(2, partial.of(A).device());
    assertEquals(0, none.size());
    assertEquals(4, x.of(A).device());
    OverlapScores locked;
    synchronized (p.lock) {
      locked = p.overlapLocked(Y, null);
    }
    assertEquals(3, locked.of(B).device());
    assertEquals(4, x.of(A).device());
  }
}
