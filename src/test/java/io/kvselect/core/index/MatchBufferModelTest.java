package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockIndex#findMatches(long[], MatchBuffer)} and the per-shard {@link OverlapScores} of
 * {@link ShardedBlockIndex} against the reference model of {@link PrefixChainIndexModelTest}: random
 * stores, removals and rank removals on every tier, 40 ranks sharing blocks (so bitset slot sets
 * occur; half the runs device-only, the buffer's direct path), one buffer reused for every query (so a stale entry of an earlier, larger result would
 * show). Every query must give the model's scores through the buffer, through
 * {@link OverlapScores#ranks()} and through {@link OverlapScores#of} for every rank.
 */
class MatchBufferModelTest {

  @Property(tries = 60)
  void bufferAndShardedScoresMatchTheModel(@ForAll long seed, @ForAll boolean deviceOnly) {
    Random rnd = new Random(seed);
    PrefixChainIndex plain = new PrefixChainIndex();
    ShardedBlockIndex sharded = new ShardedBlockIndex(3, PrefixChainIndex::new);
    PrefixChainIndexModelTest.Model model = new PrefixChainIndexModelTest.Model();
    MatchBuffer buf = new MatchBuffer();
    List<WorkerRank> ranks = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      ranks.add(new WorkerRank(i / 2, i % 2));
    }
    for (int op = 0; op < 600; op++) {
      WorkerRank r = ranks.get(rnd.nextInt(ranks.size()));
      int tier = deviceOnly || rnd.nextInt(10) < 6 ? 0 : 1 + rnd.nextInt(3);
      StorageTier st = StorageTier.values()[tier];
      int roll = rnd.nextInt(100);
      if (roll < 60) {
        int n = 1 + rnd.nextInt(4);
        long[] loc = new long[n];
        long[] ext = new long[n];
        for (int i = 0; i < n; i++) {
          loc[i] = 1 + rnd.nextInt(3);
          ext[i] = tier * 1000L + rnd.nextInt(60);
        }
        boolean hasParent = rnd.nextBoolean();
        long parent = rnd.nextInt(4) * 1000L + rnd.nextInt(60);
        boolean expected = model.store(r, tier, hasParent, parent, ext, loc);
        assertEquals(expected, plain.store(r, st, hasParent, parent, ext, loc));
        assertEquals(expected, sharded.store(r, st, hasParent, parent, ext, loc));
      } else if (roll < 92) {
        long ext = tier * 1000L + rnd.nextInt(60);
        model.remove(r, tier, ext);
        plain.remove(r, st, new long[] {ext});
        sharded.remove(r, st, new long[] {ext});
      } else if (roll < 95) {
        model.removeRank(r);
        plain.removeRank(r);
        sharded.removeRank(r);
      }
      long[] q = new long[1 + rnd.nextInt(6)];
      for (int i = 0; i < q.length; i++) {
        q[i] = 1 + rnd.nextInt(3);
      }
      Map<WorkerRank, RankOverlap> want = model.find(q);
      plain.findMatches(q, buf);
      assertEquals(want, contents(buf), "plain buffer, op " + op);
      sharded.findMatches(q, buf);
      assertEquals(want, contents(buf), "sharded buffer, op " + op);
      OverlapScores scores = sharded.findMatches(q);
      assertEquals(want, scores.ranks(), "sharded scores, op " + op);
      assertEquals(want.size(), scores.size());
      for (WorkerRank w : ranks) {
        assertEquals(want.getOrDefault(w, RankOverlap.NONE), scores.of(w), "of(" + w + ")");
      }
    }
  }

  @Test
  void growsPastItsInitialCapacityAndConvertsToScores() {
    PrefixChainIndex idx = new PrefixChainIndex();
    for (int i = 0; i < 100; i++) {
      idx.store(new WorkerRank(i, 0), StorageTier.DEVICE, false, 0, new long[] {7, 8},
          new long[] {7, 8});
    }
    idx.store(new WorkerRank(5, 0), StorageTier.HOST_PINNED, true, 8, new long[] {9},
        new long[] {9});
    MatchBuffer buf = new MatchBuffer();
    idx.findMatches(new long[] {7, 8, 9}, buf);
    assertEquals(100, buf.size());
    assertEquals(idx.findMatches(new long[] {7, 8, 9}), buf.toScores());
    assertEquals(new RankOverlap(2, 1, 0, 0), buf.toScores().of(new WorkerRank(5, 0)));
    idx.findMatches(new long[] {42}, buf);
    assertTrue(buf.isEmpty(), "a miss empties the buffer");
    assertEquals(OverlapScores.EMPTY, buf.toScores());
  }

  private static Map<WorkerRank, RankOverlap> contents(MatchBuffer b) {
    Map<WorkerRank, RankOverlap> m = new HashMap<>();
    for (int i = 0; i < b.size(); i++) {
      RankOverlap prev = m.put(b.rank(i), b.overlap(i));
      assertEquals(null, prev, "rank listed twice: " + b.rank(i));
      assertEquals(b.overlap(i).totalBlocks(), b.totalBlocks(i));
    }
    return m;
  }
}
