package io.kvselect.core.index;

import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;

/**
 * An immutable snapshot of a {@link PrefixChainIndex}'s rank interning: slot {@code s} names
 * {@code ranks[s]} (null for a free slot). Shared by every {@link OverlapScores} computed while the
 * set of ranks does not change; the index takes a new snapshot after a rank is added or removed.
 * Immutable and thread-safe once built; building costs O(slots), {@link #slotOf} O(1) expected.
 */
final class RankSlots {

  private final WorkerRank[] ranks;
  private final Object2IntOpenHashMap<WorkerRank> slots;

  RankSlots(WorkerRank[] ranks) {
    this.ranks = ranks;
    this.slots = new Object2IntOpenHashMap<>(ranks.length);
    this.slots.defaultReturnValue(-1);
    for (int s = 0; s < ranks.length; s++) {
      if (ranks[s] != null) {
        slots.put(ranks[s], s);
      }
    }
  }

  /** The slot of {@code rank}, -1 when unknown. */
  int slotOf(WorkerRank rank) {
    return slots.getInt(rank);
  }

  WorkerRank rank(int slot) {
    return ranks[slot];
  }
}
