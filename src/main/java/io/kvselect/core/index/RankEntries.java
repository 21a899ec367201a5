package io.kvselect.core.index;

import it.unimi.dsi.fastutil.ints.Int2LongOpenHashMap;
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
 * <p>Reverse direction, device tier only ({@link #deviceExternal}, for {@code kv_hint}s): an
 * {@code own} entry names its node by the chain hash; {@code otherNames} maps {@code node id ->
 * external hash} for the device-tier {@code other} entries, another 13-27 bytes per such entry.
 * Invariant: {@code otherNames[id] = ext} implies {@code other[DEVICE][ext] = id}; a node the rank
 * holds on the device tier under an {@code other} entry has a {@code otherNames} entry naming the
 * hash it was stored under last, unless the known limitation of {@link PrefixChainIndex} (one
 * node under two external hashes, one of them removed) dropped the membership too.
 *
 * <p>Owned by the index's writer thread.
 */
final class RankEntries {

  /** Callback of {@link #forEach}. */
  interface EntryConsumer {
    void accept(int tier, long ext, int node);
  }

  private static final int TIERS = 4;
  private static final int DEVICE = StorageTier.DEVICE.ordinal();

  /** Load factor of the int-keyed tables ({@code own}, {@code otherNames}): memory over probes. */
  private static final float DENSE_LOAD = 0.9f;

  final WorkerRank rank;
  final int slot;
  private final IntOpenHashSet[] own = new IntOpenHashSet[TIERS];
  private final Long2IntOpenHashMap[] other = new Long2IntOpenHashMap[TIERS];
  private Int2LongOpenHashMap otherNames;

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
    if (nodes.chain(id) == ext) {
      IntOpenHashSet s = own[tier];
      if (s == null) {
        s = new IntOpenHashSet(16, DENSE_LOAD);
        own[tier] = s;
      }
      if (!s.add(id)) {
        return id;
      }
      Long2IntOpenHashMap m = other[tier];
      int old = m == null ? ChainNodes.NONE : m.remove(ext);
      if (tier == DEVICE && old != ChainNodes.NONE) {
        forgetName(old, ext);
      }
      return old;
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
    if (tier == DEVICE) {
      if (old != ChainNodes.NONE && old != id) {
        forgetName(old, ext);
      }
      if (otherNames == null) {
        otherNames = new Int2LongOpenHashMap(16, DENSE_LOAD);
      }
      otherNames.put(id, ext);
    }
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
    int id = m == null ? ChainNodes.NONE : m.remove(ext);
    if (tier == DEVICE && id != ChainNodes.NONE) {
      forgetName(id, ext);
    }
    return id;
  }

  /**
   * Writes into {@code out[i]} an external hash under which this rank stored node {@code id} on
   * the device tier; returns false (and writes nothing) when it has none. O(1) expected.
   */
  boolean deviceExternal(int id, ChainNodes nodes, long[] out, int i) {
    IntOpenHashSet s = own[DEVICE];
    if (s != null && s.contains(id)) {
      out[i] = nodes.chain(id);
      return true;
    }
    if (otherNames == null || !otherNames.containsKey(id)) {
      return false;
    }
    out[i] = otherNames.get(id);
    return true;
  }

  /** Number of device-tier {@code node -> external hash} names kept for {@code other} entries. */
  int deviceNameCount() {
    return otherNames == null ? 0 : otherNames.size();
  }

  private void forgetName(int id, long ext) {
    if (otherNames != null && otherNames.containsKey(id) && otherNames.get(id) == ext) {
      otherNames.remove(id);
    }
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
          action.accept(t, nodes.chain(id), id);
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
