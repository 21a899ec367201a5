package io.kvselect.core.index;

import it.unimi.dsi.fastutil.longs.Long2ObjectMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.objects.Reference2LongOpenHashMap;
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
 * Runs on the index's owner thread in O(n log n) for n entries.
 */
final class ChainDump {

  private static final int TIERS = StorageTier.values().length;

  private record Entry(RankEntries owner, int tier, long ext, ChainNode node) {}

  private ChainDump() {}

  static List<StoredBlock> dump(List<RankEntries> ranks, Long2ObjectOpenHashMap<ChainNode> nodes) {
    List<Entry> entries = new ArrayList<>();
    for (RankEntries r : ranks) {
      for (int t = 0; t < TIERS; t++) {
        Long2ObjectOpenHashMap<ChainNode> lookup = r.lookups[t];
        if (lookup == null) {
          continue;
        }
        for (Long2ObjectMap.Entry<ChainNode> e : lookup.long2ObjectEntrySet()) {
          if (e.getValue().has(t, r.slot)) {
            entries.add(new Entry(r, t, e.getLongKey(), e.getValue()));
          }
        }
      }
    }
    entries.sort(Comparator.<Entry>comparingInt(e -> e.tier == 0 ? 0 : 1)
        .thenComparingInt(e -> e.node.depth)
        .thenComparingInt(Entry::tier)
        .thenComparing(e -> e.owner.rank)
        .thenComparing(Entry::ext, Long::compareUnsigned));

    Map<RankEntries, Replayed> replayed = new IdentityHashMap<>();
    List<StoredBlock> out = new ArrayList<>(entries.size());
    for (Entry e : entries) {
      Replayed r = replayed.computeIfAbsent(e.owner, k -> new Replayed());
      boolean hasParent = e.node.depth > 0;
      long parentExt = 0L;
      if (hasParent) {
        ChainNode parent = nodes.get(e.node.parentChain);
        if (parent == null || !r.resolvableParent(parent, e.tier)) {
          continue;
        }
        parentExt = r.parentExt;
      }
      r.emit(e.tier, e.ext, e.node);
      out.add(new StoredBlock(e.owner.rank, StorageTier.values()[e.tier], hasParent, parentExt,
          e.ext, e.node.local));
    }
    return out;
  }

  /**
   * What a replaying index will hold for one rank after the entries emitted so far, used to pick
   * a parent hash that the replay resolves (same tier first, then the tiers above) to the right
   * node even when a rank reuses one external hash for different blocks on different tiers.
   */
  private static final class Replayed {
    final Reference2LongOpenHashMap<ChainNode>[] extOf = newArray();
    @SuppressWarnings("unchecked")
    final Long2ObjectOpenHashMap<ChainNode>[] nodeOf = new Long2ObjectOpenHashMap[TIERS];
    long parentExt;

    Replayed() {
      for (int t = 0; t < TIERS; t++) {
        nodeOf[t] = new Long2ObjectOpenHashMap<>();
      }
    }

    void emit(int tier, long ext, ChainNode node) {
      extOf[tier].putIfAbsent(node, ext);
      nodeOf[tier].put(ext, node);
    }

    boolean resolvableParent(ChainNode parent, int tier) {
      for (int u = tier; u >= 0; u--) {
        if (!extOf[u].containsKey(parent)) {
          continue;
        }
        long ext = extOf[u].getLong(parent);
        for (int v = tier; v >= 0; v--) {
          ChainNode hit = nodeOf[v].get(ext);
          if (hit != null) {
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

  @SuppressWarnings("unchecked")
  private static Reference2LongOpenHashMap<ChainNode>[] newArray() {
    Reference2LongOpenHashMap<ChainNode>[] held = new Reference2LongOpenHashMap[TIERS];
    for (int t = 0; t < TIERS; t++) {
      held[t] = new Reference2LongOpenHashMap<>();
    }
    return held;
  }
}
