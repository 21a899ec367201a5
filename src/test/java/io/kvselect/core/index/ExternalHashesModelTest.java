package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.hash.BlockHasher;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Random operation sequences applied to each {@link BlockIndex} and to the reference model of
 * {@link PrefixChainIndexModelTest}; after every operation, {@link BlockIndex#externalHashes} of
 * every rank must name each matched device block by an external hash under which the model says
 * the rank stored that very prefix, and return exactly the rank's device depth (capped by the
 * requested depth). External hashes mix small values, values above {@code 2^63} and the router's
 * sequence hashes (which the chain index keeps in a separate representation), and removals make
 * node ids be recycled.
 */
class ExternalHashesModelTest {

  static Stream<Arguments> cases() {
    List<Arguments> out = new ArrayList<>();
    Map<String, Supplier<BlockIndex>> impls =
        Map.of(
            "chain", PrefixChainIndex::new,
            "sharded", () -> new ShardedBlockIndex(3, PrefixChainIndex::new),
            "ttl", () -> new TtlBlockIndex(Duration.ofDays(1), Clock.systemUTC()));
    for (String name : List.of("chain", "sharded", "ttl")) {
      for (long seed = 1; seed <= 4; seed++) {
        out.add(Arguments.of(name, seed, impls.get(name)));
      }
    }
    return out.stream();
  }

  private static long pooled(Random rnd, int tier) {
    long v = tier * 1000L + rnd.nextInt(60);
    return rnd.nextBoolean() ? v | 0x8000000000000000L : v;
  }

  @ParameterizedTest(name = "{0} seed {1}")
  @MethodSource("cases")
  void externalHashesMatchTheModel(String name, long seed, Supplier<BlockIndex> factory) {
    Random rnd = new Random(seed);
    BlockIndex idx = factory.get();
    PrefixChainIndexModelTest.Model model = new PrefixChainIndexModelTest.Model();
    List<WorkerRank> ranks = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      ranks.add(new WorkerRank(i / 2, i % 2));
    }
    int checkedBlocks = 0;
    for (int op = 0; op < 2000; op++) {
      WorkerRank r = ranks.get(rnd.nextInt(ranks.size()));
      int tier = rnd.nextInt(10) < 7 ? 0 : 1 + rnd.nextInt(3);
      int roll = rnd.nextInt(100);
      if (roll < 55) {
        int n = 1 + rnd.nextInt(4);
        long[] loc = new long[n];
        for (int i = 0; i < n; i++) {
          loc[i] = 1 + rnd.nextInt(3);
        }
        boolean hasParent = rnd.nextInt(3) > 0;
        long[] ext = new long[n];
        if (!hasParent && rnd.nextInt(3) == 0) {
          ext = BlockHasher.sequenceHashes(loc);
        } else {
          for (int i = 0; i < n; i++) {
            ext[i] = pooled(rnd, tier);
          }
        }
        long parent = pooled(rnd, rnd.nextInt(2) == 0 ? tier : 0);
        assertEquals(
            model.store(r, tier, hasParent, parent, ext, loc),
            idx.store(r, StorageTier.values()[tier], hasParent, parent, ext, loc),
            "op " + op);
      } else if (roll < 90) {
        long ext = pooled(rnd, tier);
        model.remove(r, tier, ext);
        idx.remove(r, StorageTier.values()[tier], new long[] {ext});
      } else if (roll < 93) {
        model.removeRank(r);
        idx.removeRank(r);
      }
      long[] q = new long[1 + rnd.nextInt(6)];
      for (int i = 0; i < q.length; i++) {
        q[i] = 1 + rnd.nextInt(3);
      }
      Map<WorkerRank, RankOverlap> expected = model.find(q);
      for (WorkerRank rank : ranks) {
        int depth = rnd.nextInt(8);
        RankOverlap o = expected.get(rank);
        int device = o == null ? 0 : o.device();
        long[] got = idx.externalHashes(rank, q, depth);
        assertEquals(Math.min(depth, device), got.length, "op " + op + " rank " + rank);
        for (int i = 0; i < got.length; i++) {
          assertTrue(
              namesOf(model, rank, prefix(q, i + 1)).contains(got[i]),
              "op " + op + " rank " + rank + " block " + i + ": " + Long.toUnsignedString(got[i]));
          checkedBlocks++;
        }
      }
    }
    assertTrue(checkedBlocks > 1000, "the sequence exercised the lookup: " + checkedBlocks);
  }

  /** Every external hash under which the model's {@code rank} stored {@code prefix} on the device. */
  private static Set<Long> namesOf(
      PrefixChainIndexModelTest.Model model, WorkerRank rank, List<Long> prefix) {
    Set<Long> out = new HashSet<>();
    List<Map<Long, List<Long>>> byTier = model.lookups.get(rank);
    if (byTier != null) {
      byTier
          .get(0)
          .forEach(
              (ext, p) -> {
                if (p.equals(prefix)) {
                  out.add(ext);
                }
              });
    }
    return out;
  }

  private static List<Long> prefix(long[] q, int n) {
    List<Long> l = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      l.add(q[i]);
    }
    return l;
  }
}
