package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockIndex#findMatchLevels} against {@link BlockIndex#findMatches(long[])} of the same
 * index, on a plain {@link PrefixChainIndex} and on a {@link ShardedBlockIndex}: random stores,
 * removals and rank removals (device-only in half the runs, the word-record path; on every tier
 * otherwise, the per-slot path), up to 200 ranks sharing a few blocks so slot sets become bitsets
 * spanning several words and ranks drop out at many depths. One {@link MatchLevels} is reused for
 * every query, so a stale record of an earlier, larger result would show. For every rank,
 * {@link MatchLevels#of}, {@link MatchLevels#device} and {@link MatchLevels#totalBlocks} must equal
 * {@link OverlapScores#of}; {@link MatchLevels#forEach} must list exactly the scored ranks once.
 */
class MatchLevelsModelTest {

  private static final Clock CLOCK = Clock.fixed(Instant.EPOCH, ZoneOffset.UTC);

  @Property(tries = 60)
  void levelsGiveTheSameOverlapAsFindMatchesForEveryRank(@ForAll long seed,
      @ForAll boolean deviceOnly, @ForAll @IntRange(min = 1, max = 200) int rankCount) {
    Random rnd = new Random(seed);
    PrefixChainIndex plain = new PrefixChainIndex();
    ShardedBlockIndex sharded = new ShardedBlockIndex(2, PrefixChainIndex::new);
    MatchLevels levels = new MatchLevels();
    List<WorkerRank> ranks = new ArrayList<>();
    for (int i = 0; i < rankCount; i++) {
      ranks.add(new WorkerRank(i / 2, i % 2));
    }
    for (int op = 0; op < 500; op++) {
      WorkerRank r = ranks.get(rnd.nextInt(ranks.size()));
      int tier = deviceOnly || rnd.nextInt(10) < 6 ? 0 : 1 + rnd.nextInt(3);
      StorageTier st = StorageTier.values()[tier];
      int roll = rnd.nextInt(100);
      if (roll < 70) {
        int n = 1 + rnd.nextInt(6);
        long[] loc = new long[n];
        long[] ext = new long[n];
        for (int i = 0; i < n; i++) {
          loc[i] = 1 + rnd.nextInt(2);
          ext[i] = tier * 1000L + rnd.nextInt(80);
        }
        boolean hasParent = rnd.nextInt(3) > 0;
        long parent = tier * 1000L + rnd.nextInt(80);
        assertEquals(plain.store(r, st, hasParent, parent, ext, loc),
            sharded.store(r, st, hasParent, parent, ext, loc));
      } else if (roll < 95) {
        long[] ext = {tier * 1000L + rnd.nextInt(80)};
        plain.remove(r, st, ext);
        sharded.remove(r, st, ext);
      } else {
        plain.removeRank(r);
        sharded.removeRank(r);
      }
      long[] q = new long[1 + rnd.nextInt(8)];
      for (int i = 0; i < q.length; i++) {
        q[i] = 1 + rnd.nextInt(2);
      }
      check(plain, q, levels, ranks, "plain, op " + op);
      check(sharded, q, levels, ranks, "sharded, op " + op);
    }
  }

  static void check(BlockIndex index, long[] q, MatchLevels levels, List<WorkerRank> ranks,
      String where) {
    OverlapScores want = index.findMatches(q);
    index.findMatchLevels(q, levels);
    assertEquals(want.ranks(), contents(levels), where);
    assertEquals(want.size(), levels.size(), where);
    int deepest = 0;
    for (WorkerRank w : ranks) {
      RankOverlap o = want.of(w);
      assertEquals(o, levels.of(w), where + " of(" + w + ")");
      assertEquals(o.device(), levels.device(w), where + " device(" + w + ")");
      assertEquals(o.totalBlocks(), levels.totalBlocks(w), where + " totalBlocks(" + w + ")");
      deepest = Math.max(deepest, o.device());
    }
    assertEquals(deepest, levels.maxDevice(), where + " maxDevice");
    assertTrue(levels.records() <= Math.max(1, levels.size()), where + " records");
  }

  static Map<WorkerRank, RankOverlap> contents(MatchLevels levels) {
    Map<WorkerRank, RankOverlap> m = new HashMap<>();
    levels.forEach((rank, d, h, dk, e) ->
        assertNull(m.put(rank, new RankOverlap(d, h, dk, e)), "rank listed twice: " + rank));
    return m;
  }

  @Test
  void thousandsOfRanksSharingOneBlockCostOneRecordPerWord() {
    PrefixChainIndex idx = new PrefixChainIndex();
    for (int i = 0; i < 3_000; i++) {
      idx.store(new WorkerRank(i, 0), StorageTier.DEVICE, false, 0, new long[] {7}, new long[] {7});
    }
    idx.store(new WorkerRank(5, 0), StorageTier.DEVICE, true, 7, new long[] {8, 9},
        new long[] {8, 9});
    MatchLevels levels = new MatchLevels();
    idx.findMatchLevels(new long[] {7, 8, 9}, levels);
    assertEquals(3_000, levels.size());
    assertEquals(3, levels.maxDevice());
    assertEquals(3, levels.device(new WorkerRank(5, 0)));
    assertEquals(1, levels.device(new WorkerRank(2_999, 0)));
    assertEquals(0, levels.device(new WorkerRank(3_000, 0)));
    // 47 words dropped at depth 1 (the word of rank 5 keeps 63 of its ranks there), one at depth 3
    assertEquals((3_000 + 63) / 64 + 1, levels.records());
    assertEquals(idx.findMatches(new long[] {7, 8, 9}), levels.toScores());
    idx.findMatchLevels(new long[] {42}, levels);
    assertTrue(levels.isEmpty(), "a miss empties the result");
    assertEquals(0, levels.records());
    assertEquals(0, levels.device(new WorkerRank(5, 0)));
    assertEquals(OverlapScores.EMPTY, levels.toScores());
  }

  @Test
  void indexesWithoutRankSlotsAnswerThroughTheDefault() {
    TtlBlockIndex ttl = new TtlBlockIndex(Duration.ofMinutes(1), CLOCK);
    List<WorkerRank> ranks = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      WorkerRank r = new WorkerRank(i, 0);
      ranks.add(r);
      ttl.store(r, StorageTier.DEVICE, false, 0, new long[] {1, 2}, new long[] {1, 2});
    }
    ttl.store(ranks.get(0), StorageTier.DEVICE, true, 2, new long[] {3}, new long[] {3});
    MatchLevels levels = new MatchLevels();
    check(ttl, new long[] {1, 2, 3}, levels, ranks, "ttl");
    assertEquals(3, levels.device(ranks.get(0)));
    ShardedBlockIndex ofTtl = new ShardedBlockIndex(2, () -> new TtlBlockIndex(Duration.ofMinutes(1), CLOCK));
    for (WorkerRank r : ranks) {
      ofTtl.store(r, StorageTier.DEVICE, false, 0, new long[] {1}, new long[] {1});
    }
    check(ofTtl, new long[] {1, 2}, levels, ranks, "sharded ttl");
    assertEquals(5, levels.size());
  }
}
