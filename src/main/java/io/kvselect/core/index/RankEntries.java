package io.kvselect.core.index;

import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;

/**
 * The blocks one rank holds in a {@link PrefixChainIndex}: per tier, {@code externalHash -> node}.
 * {@code slot} is the rank's dense id in node slot sets, unique among live ranks of the index.
 * Owned by the index's writer thread.
 */
final class RankEntries {

  final WorkerRank rank;
  final int slot;
  /** Indexed by tier ordinal; null until the rank stores on that tier. */
  @SuppressWarnings("unchecked")
  final Long2ObjectOpenHashMap<ChainNode>[] lookups = new Long2ObjectOpenHashMap[4];

  RankEntries(WorkerRank rank, int slot) {
    this.rank = rank;
    this.slot = slot;
  }

  Long2ObjectOpenHashMap<ChainNode> lookupOrCreate(int tier) {
    Long2ObjectOpenHashMap<ChainNode> m = lookups[tier];
    if (m == null) {
      m = new Long2ObjectOpenHashMap<>();
      lookups[tier] = m;
    }
    return m;
  }

  /** The node of {@code parentExt} on {@code tier} or, failing that, on the tiers above it. */
  ChainNode parent(int tier, long parentExt) {
    for (int t = tier; t >= 0; t--) {
      Long2ObjectOpenHashMap<ChainNode> m = lookups[t];
      ChainNode n = m == null ? null : m.get(parentExt);
      if (n != null && n.has(t, slot)) {
        return n;
      }
    }
    return null;
  }
}
