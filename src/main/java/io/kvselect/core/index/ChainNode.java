package io.kvselect.core.index;

/**
 * One distinct block prefix: the node of the implicit radix tree, identified by its {@code chain}
 * hash (see {@link PrefixChainIndex}). Holds which rank slots hold the block on each tier.
 *
 * <p>Invariants: {@code holders} is the number of (tier, slot) memberships; a node with no holder is
 * unlinked from the index's chain map. {@code depth} is the block's position (0 = first block).
 * Owned by the index's writer thread.
 */
final class ChainNode {

  final long chain;
  final long local;
  final long parentChain;
  final int depth;
  /** Device-tier slot set (see {@link SlotSet}). */
  Object device;
  /** Lower-tier slot sets indexed by tier ordinal - 1, allocated on first lower-tier store. */
  Object[] lower;
  int holders;

  ChainNode(long chain, long local, long parentChain, int depth) {
    this.chain = chain;
    this.local = local;
    this.parentChain = parentChain;
    this.depth = depth;
  }

  Object slots(int tier) {
    if (tier == 0) {
      return device;
    }
    return lower == null ? null : lower[tier - 1];
  }

  boolean has(int tier, int slot) {
    return SlotSet.contains(slots(tier), slot);
  }

  /** Adds a membership; the caller checked {@link #has} is false. */
  void add(int tier, int slot) {
    if (tier == 0) {
      device = SlotSet.add(device, slot);
    } else {
      if (lower == null) {
        lower = new Object[3];
      }
      lower[tier - 1] = SlotSet.add(lower[tier - 1], slot);
    }
    holders++;
  }

  /** Removes a membership; the caller checked {@link #has} is true. */
  void remove(int tier, int slot) {
    if (tier == 0) {
      device = SlotSet.remove(device, slot);
    } else {
      lower[tier - 1] = SlotSet.remove(lower[tier - 1], slot);
    }
    holders--;
  }
}
