package io.kvselect.core.index;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@link MatchLevels} result read after its lookup returned, while a writer thread keeps
 * changing the bitset slot sets the lookup read (stores and removals of blocks shared by hundreds
 * of ranks, which mutate those sets in place): the result must not change between the lookup and
 * a later read, taken after the writer has applied more operations. A result that kept a reference
 * to a live slot set instead of a copy would change under the reader. Every lookup must also be a
 * well-formed answer (each rank once, depths within the query), and once the writer stops the
 * result must equal {@link BlockIndex#findMatches(long[])}.
 *
 * <p>Seeded; bounded in count (lookups, writer operations) and in time (Awaitility deadlines).
 */
class MatchLevelsConcurrencyTest {

  private static final int RANKS = 300;
  private static final int LOOKUPS = 200;
  private static final long MAX_WRITES = 5_000_000;
  private static final long[] CHAIN = {11, 12, 13, 14, 15, 16};

  @Test
  @Timeout(120)
  void aResultDoesNotChangeWhileWritersMutateTheSetsItWasReadFrom() throws Exception {
    ShardedBlockIndex index = new ShardedBlockIndex(2, PrefixChainIndex::new);
    List<WorkerRank> ranks = new ArrayList<>();
    for (int i = 0; i < RANKS; i++) {
      WorkerRank r = new WorkerRank(i, 0);
      ranks.add(r);
      index.store(r, StorageTier.DEVICE, false, 0, CHAIN.clone(), CHAIN.clone());
    }
    AtomicLong writes = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread writer = new Thread(() -> {
      Random rnd = new Random(7);
      try {
        while (!stop.get() && writes.get() < MAX_WRITES) {
          WorkerRank r = ranks.get(rnd.nextInt(RANKS));
          int keep = rnd.nextInt(CHAIN.length);
          long[] tail = Arrays.copyOfRange(CHAIN, keep, CHAIN.length);
          index.remove(r, StorageTier.DEVICE, tail);
          if (rnd.nextBoolean() && keep > 0) {
            index.store(r, StorageTier.DEVICE, true, CHAIN[keep - 1], tail.clone(), tail.clone());
          } else if (keep == 0) {
            index.store(r, StorageTier.DEVICE, false, 0, CHAIN.clone(), CHAIN.clone());
          }
          writes.incrementAndGet();
        }
      } catch (Throwable e) {
        failure.set(e);
      }
    }, "levels-writer");
    writer.start();
    MatchLevels levels = new MatchLevels();
    try {
      for (int i = 0; i < LOOKUPS; i++) {
        index.findMatchLevels(CHAIN, levels);
        Map<WorkerRank, RankOverlap> first = MatchLevelsModelTest.contents(levels);
        assertEquals(first.size(), levels.size());
        for (RankOverlap o : first.values()) {
          assertTrue(o.device() >= 1 && o.device() <= CHAIN.length, "depth " + o);
        }
        long target = writes.get() + 20;
        await().atMost(Duration.ofSeconds(30)).pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(1))
            .until(() -> writes.get() >= target || failure.get() != null);
        assertNull(failure.get(), "writer failed");
        assertEquals(first, MatchLevelsModelTest.contents(levels), "lookup " + i);
        for (WorkerRank r : ranks) {
          assertEquals(first.getOrDefault(r, RankOverlap.NONE).device(), levels.device(r),
              "lookup " + i + ", " + r);
        }
      }
    } finally {
      stop.set(true);
      writer.join(30_000);
    }
    assertNull(failure.get(), "writer failed");
    assertTrue(!writer.isAlive(), "writer stopped");
    MatchLevelsModelTest.check(index, CHAIN, levels, ranks, "after the writer stopped");
  }
}
