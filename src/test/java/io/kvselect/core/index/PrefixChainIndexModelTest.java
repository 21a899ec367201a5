package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random operation sequences applied to {@link PrefixChainIndex} and to a naive model that keeps
 * whole prefixes per (rank, tier); every query must score identically, and a dump replayed into a
 * fresh index must score identically too. Enough ranks share blocks for bitset slot sets to occur.
 */
class PrefixChainIndexModelTest {

  /** The reference semantics, spelled out with lists of local hashes as prefix identities. */
  static final class Model {
    final Map<WorkerRank, List<Map<Long, List<Long>>>> lookups = new HashMap<>();
    final Map<WorkerRank, List<Set<List<Long>>>> held = new HashMap<>();

    private List<Map<Long, List<Long>>> lookups(WorkerRank r) {
      return lookups.computeIfAbsent(
          r,
          k -> {
            List<Map<Long, List<Long>>> l = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
              l.add(new HashMap<>());
            }
            return l;
          });
    }

    private List<Set<List<Long>>> held(WorkerRank r) {
      return held.computeIfAbsent(
          r,
          k -> {
            List<Set<List<Long>>> l = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
              l.add(new HashSet<>());
            }
            return l;
          });
    }

    boolean store(WorkerRank r, int tier, boolean hasParent, long parent, long[] ext, long[] loc) {
      List<Long> prefix = new ArrayList<>();
      if (hasParent) {
        List<Long> found = null;
        for (int t = tier; t >= 0 && found == null; t--) {
          List<Long> p = lookups(r).get(t).get(parent);
          if (p != null && held(r).get(t).contains(p)) {
            found = p;
          }
        }
        if (found == null) {
          return false;
        }
        prefix.addAll(found);
      }
      for (int i = 0; i < ext.length; i++) {
        prefix.add(loc[i]);
        List<Long> p = List.copyOf(prefix);
        held(r).get(tier).add(p);
        List<Long> old = lookups(r).get(tier).put(ext[i], p);
        if (old != null && !old.equals(p)) {
          held(r).get(tier).remove(old);
        }
      }
      return true;
    }

    void remove(WorkerRank r, int tier, long ext) {
      List<Long> p = lookups(r).get(tier).remove(ext);
      if (p != null) {
        held(r).get(tier).remove(p);
      }
    }

    void removeRank(WorkerRank r) {
      lookups.remove(r);
      held.remove(r);
    }

    Map<WorkerRank, RankOverlap> find(long[] q) {
      Map<WorkerRank, RankOverlap> out = new HashMap<>();
      for (Map.Entry<WorkerRank, List<Set<List<Long>>>> e : held.entrySet()) {
        int[] run = new int[4];
        int depth = 0;
        for (int t = 0; t < 4; t++) {
          while (depth < q.length && e.getValue().get(t).contains(prefixOf(q, depth + 1))) {
            depth++;
            run[t]++;
          }
        }
        if (depth > 0) {
          out.put(e.getKey(), new RankOverlap(run[0], run[1], run[2], run[3]));
        }
      }
      return out;
    }

    private static List<Long> prefixOf(long[] q, int n) {
      List<Long> l = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        l.add(q[i]);
      }
      return l;
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void matchesTheModel(long seed) {
    Random rnd = new Random(seed);
    PrefixChainIndex idx = new PrefixChainIndex();
    Model model = new Model();
    List<WorkerRank> ranks = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      ranks.add(new WorkerRank(i / 2, i % 2));
    }
    for (int op = 0; op < 3000; op++) {
      WorkerRank r = ranks.get(rnd.nextInt(ranks.size()));
      int tier = rnd.nextInt(10) < 6 ? 0 : 1 + rnd.nextInt(3);
      int roll = rnd.nextInt(100);
      if (roll < 55) {
        int n = 1 + rnd.nextInt(4);
        long[] loc = new long[n];
        long[] ext = new long[n];
        for (int i = 0; i < n; i++) {
          loc[i] = 1 + rnd.nextInt(3);
          ext[i] = tier * 1000L + rnd.nextInt(60);
        }
        boolean hasParent = rnd.nextBoolean();
        long parent = rnd.nextInt(4) * 1000L + rnd.nextInt(60);
        assertEquals(
            model.store(r, tier, hasParent, parent, ext, loc),
            idx.store(r, StorageTier.values()[tier], hasParent, parent, ext, loc),
            "op " + op);
      } else if (roll < 90) {
        long ext = tier * 1000L + rnd.nextInt(60);
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
      assertEquals(model.find(q), idx.findMatches(q).ranks(), "op " + op);
      if (op % 500 == 499) {
        PrefixChainIndex replay = new PrefixChainIndex();
        BlockIndexContract.replayInto(replay, idx.dump());
        for (int j = 0; j < 30; j++) {
          long[] q2 = new long[1 + rnd.nextInt(6)];
          for (int i = 0; i < q2.length; i++) {
            q2[i] = 1 + rnd.nextInt(3);
          }
          assertEquals(idx.findMatches(q2).ranks(), replay.findMatches(q2).ranks(), "replay");
        }
      }
    }
  }
}
