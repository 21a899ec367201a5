package io.kvselect.core.index;

import it.unimi.dsi.fastutil.HashCommon;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import java.util.Arrays;

/**
 * The nodes of a {@link PrefixChainIndex}: one node per distinct block prefix, identified by an
 * int id and stored in parallel primitive arrays, plus the {@code chain hash -> id} table.
 *
 * <p>Per node: {@code chain} (the prefix's chain hash, the table key), {@code local} (the block's
 * local hash), {@code parent} (id of the node one block shorter, {@link #NONE} at the root),
 * {@code refs} and the device-tier slot set, 28 bytes in all; lower-tier sets live in a side map
 * that only nodes held on a lower tier pay for. The table is open addressing with linear probing
 * over ids only (4 bytes a slot); a probe compares {@code chain[id]}.
 *
 * <p>Invariants: {@code refs[id]} counts the (rank, tier, external hash) entries naming the node
 * plus its child nodes; a node is freed (unlinked, id recycled) exactly when it drops to zero, so
 * an id held anywhere in the index stays valid and a live node's parent is always live. A slot
 * set membership implies an entry naming the node, hence a positive {@code refs}. A node may stay
 * linked without any membership while a stale entry or a descendant references it; queries treat
 * it like a missing one.
 *
 * <p>Slot sets are ints: {@code 0} is empty, {@code v > 0} is the single slot {@code v - 1} (most
 * blocks are held by one rank), {@code v < 0} indexes a pooled {@link SlotSet} object.
 *
 * <p>Owned by the index's writer thread. Lookups, creation and freeing cost O(1) expected.
 */
final class ChainNodes {

  static final int NONE = -1;

  long[] chain = new long[16];
  long[] local = new long[16];
  int[] parent = new int[16];
  int[] device = new int[16];
  private int[] refs = new int[16];
  private final Int2ObjectOpenHashMap<int[]> lower = new Int2ObjectOpenHashMap<>();
  private Object[] pool = new Object[16];
  private int[] freePool = new int[16];
  private int freePoolCount;
  private int poolLimit;

  private int[] table = new int[32];
  private int mask = 31;
  private int count;
  private int limit;
  private int[] freeIds = new int[16];
  private int freeCount;

  /** Number of linked nodes. */
  int count() {
    return count;
  }

  /** Id of the node whose chain hash is {@code c}, or {@link #NONE}. */
  int find(long c) {
    int[] t = table;
    int m = mask;
    long[] ch = chain;
    int pos = (int) HashCommon.mix(c) & m;
    for (int v; (v = t[pos]) != 0; pos = (pos + 1) & m) {
      if (ch[v - 1] == c) {
        return v - 1;
      }
    }
    return NONE;
  }

  /** The node of chain {@code c}, created under {@code parentId} when missing. */
  int findOrCreate(long c, long localHash, int parentId) {
    int pos = (int) HashCommon.mix(c) & mask;
    for (int v; (v = table[pos]) != 0; pos = (pos + 1) & mask) {
      if (chain[v - 1] == c) {
        return v - 1;
      }
    }
    int id = freeCount > 0 ? freeIds[--freeCount] : newId();
    chain[id] = c;
    local[id] = localHash;
    parent[id] = parentId;
    refs[id] = 0;
    device[id] = 0;
    if (parentId != NONE) {
      refs[parentId]++;
    }
    table[pos] = id + 1;
    if (++count > (mask + 1) * 3 / 4) {
      rehash((mask + 1) * 2);
    }
    return id;
  }

  void retain(int id) {
    refs[id]++;
  }

  /** Drops one reference; frees the node, then unreferenced ancestors, at zero. */
  void release(int id) {
    while (id != NONE && --refs[id] == 0) {
      unlink(id);
      int up = parent[id];
      freeIds = grow(freeIds, freeCount + 1);
      freeIds[freeCount++] = id;
      id = up;
    }
  }

  /** The encoded slot set of {@code tier} ({@code 0} when empty). */
  int set(int id, int tier) {
    if (tier == 0) {
      return device[id];
    }
    int[] l = lower.get(id);
    return l == null ? 0 : l[tier - 1];
  }

  /** The pooled {@link SlotSet} object of an encoded set {@code enc < 0}. */
  Object pooled(int enc) {
    return pool[-enc - 1];
  }

  boolean has(int id, int tier, int slot) {
    int enc = set(id, tier);
    if (enc > 0) {
      return enc - 1 == slot;
    }
    return enc < 0 && SlotSet.contains(pool[-enc - 1], slot);
  }

  /** Adds a membership; the caller checked {@link #has} is false. */
  void add(int id, int tier, int slot) {
    if (tier == 0) {
      device[id] = added(device[id], slot);
      return;
    }
    int[] l = lower.get(id);
    if (l == null) {
      l = new int[3];
      lower.put(id, l);
    }
    l[tier - 1] = added(l[tier - 1], slot);
  }

  /** Removes a membership; the caller checked {@link #has} is true. */
  void remove(int id, int tier, int slot) {
    if (tier == 0) {
      device[id] = removed(device[id], slot);
      return;
    }
    int[] l = lower.get(id);
    l[tier - 1] = removed(l[tier - 1], slot);
    if ((l[0] | l[1] | l[2]) == 0) {
      lower.remove(id);
    }
  }

  private int added(int enc, int slot) {
    if (enc == 0) {
      return slot + 1;
    }
    if (enc > 0) {
      Object set = SlotSet.add(SlotSet.add(null, enc - 1), slot);
      int p = freePoolCount > 0 ? freePool[--freePoolCount] : poolLimit++;
      pool = grow(pool, p + 1);
      pool[p] = set;
      return -p - 1;
    }
    int p = -enc - 1;
    pool[p] = SlotSet.add(pool[p], slot);
    return enc;
  }

  private int removed(int enc, int slot) {
    if (enc > 0) {
      return 0;
    }
    int p = -enc - 1;
    Object set = SlotSet.remove(pool[p], slot);
    int single = SlotSet.single(set);
    if (single < 0) {
      pool[p] = set;
      return enc;
    }
    pool[p] = null;
    freePool = grow(freePool, freePoolCount + 1);
    freePool[freePoolCount++] = p;
    return set == null ? 0 : single + 1;
  }

  private int newId() {
    int id = limit++;
    if (id == chain.length) {
      int cap = id + (id >>> 1);
      chain = Arrays.copyOf(chain, cap);
      local = Arrays.copyOf(local, cap);
      parent = Arrays.copyOf(parent, cap);
      device = Arrays.copyOf(device, cap);
      refs = Arrays.copyOf(refs, cap);
    }
    return id;
  }

  private void unlink(int id) {
    long c = chain[id];
    int pos = (int) HashCommon.mix(c) & mask;
    while (table[pos] != id + 1) {
      pos = (pos + 1) & mask;
    }
    count--;
    for (;;) {
      int last = pos;
      pos = (pos + 1) & mask;
      int v;
      for (;;) {
        v = table[pos];
        if (v == 0) {
          table[last] = 0;
          return;
        }
        int home = (int) HashCommon.mix(chain[v - 1]) & mask;
        if (last <= pos ? last >= home || home > pos : last >= home && home > pos) {
          break;
        }
        pos = (pos + 1) & mask;
      }
      table[last] = v;
    }
  }

  private void rehash(int capacity) {
    int[] t = new int[capacity];
    int m = capacity - 1;
    for (int v : table) {
      if (v != 0) {
        int pos = (int) HashCommon.mix(chain[v - 1]) & m;
        while (t[pos] != 0) {
          pos = (pos + 1) & m;
        }
        t[pos] = v;
      }
    }
    table = t;
    mask = m;
  }

  private static int[] grow(int[] a, int size) {
    return size <= a.length ? a : Arrays.copyOf(a, Math.max(size, a.length * 2));
  }

  private static Object[] grow(Object[] a, int size) {
    return size <= a.length ? a : Arrays.copyOf(a, Math.max(size, a.length * 2));
  }
}
