package io.kvselect.core.index;

import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds {@link PrefixChainIndex#dump()}: one single-block {@link StoredBlock} per (rank, tier,
 * block), device tier first, then the lower tiers; each part ordered by depth (BFS), so every
 * parent precedes its children.
 *
 * <p>Only <i>replayable</i> entries are emitted: a block at depth 0, or one whose parent the same
 * rank holds (as a replayable entry) on the same tier or a tier above. The others are left over
 * after a non-cascading removal; they can never count in {@code findMatches} (depths and tier
 * extensions only follow contiguous runs from the root), and replaying them would be rejected
 * for an unknown parent. Hence replaying the dump into an empty index reproduces every
 * {@code findMatches} result. One exception: a rank that reuses an external hash for different
 * blocks on different tiers can shadow a parent so that no single-block event can name it; such an
 * entry is dropped (engines derive the hash from the block's content, so this does not arise).
 * Depths are not stored: a node's depth is found by following parent ids (always live, see
 * {@link ChainNodes}). Runs on the index's owner thread in O(n log n) for n entries.
 */
final class ChainDump {

  private static final int TIERS = StorageTier.values().length;

  private record Entry(RankEntries owner, int tier, long ext, int node, int depth) {}

  private ChainDump() {}

  static List<StoredBlock> dump(List<RankEntries> ranks, ChainNodes nodes) {
    List<Entry> entries = new ArrayList<>();
    Int2IntOpenHashMap depths = new Int2IntOpenHashMap();
    for (RankEntries r : ranks) {
      r.forEach(
          nodes,
          (t, ext, id) -> {
            if (nodes.has(id, t, r.slot)) {
              entries.add(new Entry(r, t, ext, id, depth(id, nodes, depths)));
            }
          });
    }
    entries.sort(
        Comparator.<Entry>comparingInt(e -> e.tier == 0 ? 0 : 1)
            .thenComparingInt(Entry::depth)
            .thenComparingInt(Entry::tier)
            .thenComparing(e -> e.owner.rank)
            .thenComparing(Entry::ext, Long::compareUnsigned));

    Map<RankEntries, Replayed> replayed = new IdentityHashMap<>();
    List<StoredBlock> out = new ArrayList<>(entries.size());
    for (Entry e : entries) {
      Replayed r = replayed.computeIfAbsent(e.owner, k -> new Replayed());
      int parent = nodes.parent(e.node);
      boolean hasParent = parent != ChainNodes.NONE;
      long parentExt = 0L;
      if (hasParent) {
        if (!r.resolvableParent(parent, e.tier)) {
          continue;
        }
        parentExt = r.parentExt;
      }
      r.emit(e.tier, e.ext, e.node);
      out.add(
          new StoredBlock(
              e.owner.rank,
              StorageTier.values()[e.tier],
              hasParent,
              parentExt,
              e.ext,
              nodes.local(e.node)));
    }
    return out;
  }

  private static int depth(int id, ChainNodes nodes, Int2IntOpenHashMap memo) {
    int d = 0;
    int n = id;
    while (nodes.parent(n) != ChainNodes.NONE) {
      if (memo.containsKey(n)) {
        d += memo.get(n);
        break;
      }
      d++;
      n = nodes.parent(n);
    }
    memo.put(id, d);
    return d;
  }

  /**
   * What a replaying index will hold for one rank after the entries emitted so far, used to pick
   * a parent hash that the replay resolves (same tier first, then the tiers above) to the right
   * node even when a rank reuses one external hash for different blocks on different tiers.
   */
  private static final class Replayed {
    final Int2LongOpenHashMap[] extOf = new Int2LongOpenHashMap[TIERS];
    final Long2IntOpenHashMap[] nodeOf = new Long2IntOpenHashMap[TIERS];
    long parentExt;

    Replayed() {
      for (int t = 0; t < TIERS; t++) {
        extOf[t] = new Int2LongOpenHashMap();
        nodeOf[t] = new Long2IntOpenHashMap();
        nodeOf[t].defaultReturnValue(ChainNodes.NONE);
      }
    }

    void emit(int tier, long ext, int node) {
      extOf[tier].putIfAbsent(node, ext);
      nodeOf[tier].put(ext, node);
    }

    boolean resolvableParent(int parent, int tier) {
      for (int u = tier; u >= 0; u--) {
        if (!extOf[u].containsKey(parent)) {
          continue;
        }
        long ext = extOf[u].get(parent);
        for (int v = tier; v >= 0; v--) {
          int hit = nodeOf[v].get(ext);
          if (hit != ChainNodes.NONE) {
            if (hit == parent) {
              parentExt = ext;
              return true;
            }
            break;
          }
        }
      }
      return false;
    }
  }
}
