package io.kvselect.core.index;

import it.unimi.dsi.fastutil.ints.IntIterator;
import it.unimi.dsi.fastutil.ints.IntOpenHashSet;
import it.unimi.dsi.fastutil.longs.Long2IntMap;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * The blocks one rank holds in a {@link PrefixChainIndex}: per tier, a map {@code externalHash ->
 * node id}. {@code slot} is the rank's dense id in node slot sets, unique among live ranks.
 *
 * <p>Representation: an entry whose external hash equals the node's chain hash (engines that
 * publish Dynamo's public sequence hashes, such as the mocker, and every {@link TtlBlockIndex}
 * record) is kept as the node id alone in an int set ({@code own}); its key is {@code chain[id]},
 * found through {@link ChainNodes#find}. Any other entry goes to a {@code long -> int} map
 * ({@code other}). The two key sets are disjoint, so together they are exactly one map. Cost per
 * entry: about 4-10 bytes for {@code own}, 16-32 for {@code other}; O(1) expected per operation.
 *
 * <p>Owned by the index's writer thread.
 */
final class RankEntries {

  /** Callback of {@link #forEach}. */
  interface EntryConsumer {
    void accept(int tier, long ext, int node);
  }

  private static final int TIERS = 4;
  private static final float OWN_LOAD = 0.9f;

  final WorkerRank rank;
  final int slot;
  private final IntOpenHashSet[] own = new IntOpenHashSet[TIERS];
  private final Long2IntOpenHashMap[] other = new Long2IntOpenHashMap[TIERS];

  RankEntries(WorkerRank rank, int slot) {
    this.rank = rank;
    this.slot = slot;
  }

  /** The node of {@code ext} on {@code tier}, or {@link ChainNodes#NONE}. */
  int get(int tier, long ext, ChainNodes nodes) {
    IntOpenHashSet s = own[tier];
    if (s != null) {
      int id = nodes.find(ext);
      if (id != ChainNodes.NONE && s.contains(id)) {
        return id;
      }
    }
    Long2IntOpenHashMap m = other[tier];
    return m == null ? ChainNodes.NONE : m.get(ext);
  }

  /**
   * Maps {@code ext} to {@code id} on {@code tier}; returns the node it mapped to before, or
   * {@link ChainNodes#NONE}. Reference counts are the caller's business.
   */
  int put(int tier, long ext, int id, ChainNodes nodes) {
    if (nodes.chain[id] == ext) {
      IntOpenHashSet s = own[tier];
      if (s == null) {
        s = new IntOpenHashSet(16, OWN_LOAD);
        own[tier] = s;
      }
      if (!s.add(id)) {
        return id;
      }
      Long2IntOpenHashMap m = other[tier];
      return m == null ? ChainNodes.NONE : m.remove(ext);
    }
    int prev = ChainNodes.NONE;
    IntOpenHashSet s = own[tier];
    if (s != null) {
      int n = nodes.find(ext);
      if (n != ChainNodes.NONE && s.remove(n)) {
        prev = n;
      }
    }
    Long2IntOpenHashMap m = other[tier];
    if (m == null) {
      m = new Long2IntOpenHashMap();
      m.defaultReturnValue(ChainNodes.NONE);
      other[tier] = m;
    }
    int old = m.put(ext, id);
    return old != ChainNodes.NONE ? old : prev;
  }

  /** Removes {@code ext} from {@code tier}; returns the node it mapped to or {@link ChainNodes#NONE}. */
  int remove(int tier, long ext, ChainNodes nodes) {
    IntOpenHashSet s = own[tier];
    if (s != null) {
      int id = nodes.find(ext);
      if (id != ChainNodes.NONE && s.remove(id)) {
        return id;
      }
    }
    Long2IntOpenHashMap m = other[tier];
    return m == null ? ChainNodes.NONE : m.remove(ext);
  }

  /** The node of {@code parentExt} on {@code tier} or, failing that, on the tiers above it. */
  int parent(int tier, long parentExt, ChainNodes nodes) {
    for (int t = tier; t >= 0; t--) {
      int id = get(t, parentExt, nodes);
      if (id != ChainNodes.NONE && nodes.has(id, t, slot)) {
        return id;
      }
    }
    return ChainNodes.NONE;
  }

  /** Visits every entry, tier by tier. */
  void forEach(ChainNodes nodes, EntryConsumer action) {
    for (int t = 0; t < TIERS; t++) {
      IntOpenHashSet s = own[t];
      if (s != null) {
        for (IntIterator it = s.iterator(); it.hasNext(); ) {
          int id = it.nextInt();
          action.accept(t, nodes.chain[id], id);
        }
      }
      Long2IntOpenHashMap m = other[t];
      if (m != null) {
        for (Long2IntMap.Entry e : m.long2IntEntrySet()) {
          action.accept(t, e.getLongKey(), e.getIntValue());
        }
      }
    }
  }
}
