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
 * {@code findMatches} result. Runs on the index's owner thread in O(n log n) for n entries.
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
    entries.sort(Comparator.<Entry>comparingInt(e -> e.node.depth)
        .thenComparingInt(Entry::tier)
        .thenComparing(e -> e.owner.rank)
        .thenComparing(Entry::ext, Long::compareUnsigned));

    Map<RankEntries, Reference2LongOpenHashMap<ChainNode>[]> replayable =
        new IdentityHashMap<>();
    List<StoredBlock> device = new ArrayList<>();
    List<StoredBlock> lower = new ArrayList<>();
    for (Entry e : entries) {
      Reference2LongOpenHashMap<ChainNode>[] held =
          replayable.computeIfAbsent(e.owner, k -> newHeld());
      boolean hasParent = e.node.depth > 0;
      long parentExt = 0L;
      if (hasParent) {
        ChainNode parent = nodes.get(e.node.parentChain);
        int t = e.tier;
        while (parent != null && t >= 0 && !held[t].containsKey(parent)) {
          t--;
        }
        if (parent == null || t < 0) {
          continue;
        }
        parentExt = held[t].getLong(parent);
      }
      held[e.tier].putIfAbsent(e.node, e.ext);
      StoredBlock b = new StoredBlock(e.owner.rank, StorageTier.values()[e.tier], hasParent,
          parentExt, e.ext, e.node.local);
      (e.tier == 0 ? device : lower).add(b);
    }
    device.addAll(lower);
    return device;
  }

  @SuppressWarnings("unchecked")
  private static Reference2LongOpenHashMap<ChainNode>[] newHeld() {
    Reference2LongOpenHashMap<ChainNode>[] held = new Reference2LongOpenHashMap[TIERS];
    for (int t = 0; t < TIERS; t++) {
      held[t] = new Reference2LongOpenHashMap<>();
    }
    return held;
  }
}
