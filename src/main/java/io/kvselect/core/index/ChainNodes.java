package io.kvselect.core.index;

import it.unimi.dsi.fastutil.HashCommon;
import it.unimi.dsi.fastutil.ints.Int2IntOpenHashMap;
import it.unimi.dsi.fastutil.ints.Int2ObjectOpenHashMap;
import java.util.Arrays;

/**
 * The nodes of a {@link PrefixChainIndex}: one node per distinct block prefix, identified by an
 * int id and stored in primitive pages, plus the {@code chain hash -> id} table.
 *
 * <p>Per node: {@code chain} (the prefix's chain hash, the table key), {@code local} (the block's
 * local hash), {@code parent} (id of the node one block shorter, {@link #NONE} at the root),
 * {@code refs} and the device-tier slot set, 25 bytes in all; lower-tier sets live in a side map
 * that only nodes held on a lower tier pay for. Chain, local, parent and device set sit together
 * in one 24-byte stride of a {@code long} page (what a query reads per level: one cache line or
 * two instead of one per array); {@code refs} in a {@code byte} page, counts from
 * {@value #REF_OVERFLOW} up in a side map (only nodes shared by many entries or children pay for
 * it). Pages hold {@value #PAGE} nodes (192 KB and 8 KB), below half of the smallest G1
 * region, so no node array is humongous and the capacity beyond the live ids is at most one page
 * per kind (the first page starts at 16 nodes and doubles, so a small index stays small). The
 * table is open addressing with linear probing over ids (4 bytes a slot): a slot holds {@code id +
 * 1} in its low {@code idBits} bits and, in the bits above, a tag taken from the high bits of the
 * chain's mixed hash, so a probe reads the node's page ({@link #chain}, a likely cache miss) only
 * when the tag matches: with {@code 31 - idBits} tag bits, a non-matching slot is read once in
 * {@code 2^(31 - idBits)} (1 in 8,192 at 262,144 ids, 1 in 128 at 16 M). {@code idBits} grows
 * with the ids in use (the table is re-encoded then).
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

  private static final int PAGE_BITS = 13;

  /** Nodes per page. */
  static final int PAGE = 1 << PAGE_BITS;

  private static final int PAGE_MASK = PAGE - 1;
  private static final int STRIDE = 3;
  private static final long LOW = 0xFFFF_FFFFL;

  /** A byte reference count of this value means the count lives in {@link #bigRefs}. */
  static final int REF_OVERFLOW = 255;

  /** Per node {@code [chain, local, parent << 32 | device]}, {@link #PAGE} nodes per page. */
  private long[][] pages = new long[4][];

  /** Reference counts below {@link #REF_OVERFLOW}; {@code REF_OVERFLOW} means "in {@link #bigRefs}". */
  private byte[][] refPages = new byte[4][];

  private final Int2IntOpenHashMap bigRefs = new Int2IntOpenHashMap();
  private int pageCount;
  private final Int2ObjectOpenHashMap<int[]> lower = new Int2ObjectOpenHashMap<>();
  private Object[] pool = new Object[16];
  private int[] freePool = new int[16];
  private int freePoolCount;
  private int poolLimit;

  private int[] table = new int[32];
  private int mask = 31;

  /** Bits of a table slot holding {@code id + 1}; the slot's higher bits hold the chain's tag. */
  private int idBits = 16;

  private int idMask = (1 << 16) - 1;
  private int count;
  private int limit;
  private int[] freeIds = new int[16];
  private int freeCount;

  /** The chain hash of node {@code id}. */
  long chain(int id) {
    return pages[id >>> PAGE_BITS][(id & PAGE_MASK) * STRIDE];
  }

  /** The local hash of node {@code id}'s block. */
  long local(int id) {
    return pages[id >>> PAGE_BITS][(id & PAGE_MASK) * STRIDE + 1];
  }

  /** The parent of node {@code id}, {@link #NONE} at the root. */
  int parent(int id) {
    return (int) (pages[id >>> PAGE_BITS][(id & PAGE_MASK) * STRIDE + 2] >> 32);
  }

  /** The encoded device-tier slot set of node {@code id}. */
  int device(int id) {
    return (int) pages[id >>> PAGE_BITS][(id & PAGE_MASK) * STRIDE + 2];
  }

  private void setDevice(int id, int enc) {
    long[] p = pages[id >>> PAGE_BITS];
    int o = (id & PAGE_MASK) * STRIDE + 2;
    p[o] = (p[o] & ~LOW) | (enc & LOW);
  }

  /** The reference count of node {@code id}. */
  int refs(int id) {
    int b = refPages[id >>> PAGE_BITS][id & PAGE_MASK] & 0xFF;
    return b == REF_OVERFLOW ? bigRefs.get(id) : b;
  }

  private void addRefs(int id, int delta) {
    byte[] page = refPages[id >>> PAGE_BITS];
    int o = id & PAGE_MASK;
    int b = page[o] & 0xFF;
    int n = (b == REF_OVERFLOW ? bigRefs.get(id) : b) + delta;
    if (n >= REF_OVERFLOW) {
      bigRefs.put(id, n);
      page[o] = (byte) REF_OVERFLOW;
      return;
    }
    if (b == REF_OVERFLOW) {
      bigRefs.remove(id);
    }
    page[o] = (byte) n;
  }

  /** Number of linked nodes. */
  int count() {
    return count;
  }

  /** Id of the node whose chain hash is {@code c}, or {@link #NONE}. */
  int find(long c) {
    int[] t = table;
    int m = mask;
    int im = idMask;
    long[][] pg = pages;
    long h = HashCommon.mix(c);
    int tag = (int) (h >>> 33) & ~im;
    int pos = (int) h & m;
    for (int v; (v = t[pos]) != 0; pos = (pos + 1) & m) {
      if ((v & ~im) == tag) {
        int id = (v & im) - 1;
        if (pg[id >>> PAGE_BITS][(id & PAGE_MASK) * STRIDE] == c) {
          return id;
        }
      }
    }
    return NONE;
  }

  /** The node of chain {@code c}, created under {@code parentId} when missing. */
  int findOrCreate(long c, long localHash, int parentId) {
    if (freeCount == 0 && limit + 1 > idMask && idBits < 31) {
      idBits++;
      idMask = (int) ((1L << idBits) - 1);
      rehash(mask + 1);
    }
    int im = idMask;
    long h = HashCommon.mix(c);
    int tag = (int) (h >>> 33) & ~im;
    int pos = (int) h & mask;
    for (int v; (v = table[pos]) != 0; pos = (pos + 1) & mask) {
      if ((v & ~im) == tag && chain((v & im) - 1) == c) {
        return (v & im) - 1;
      }
    }
    int id = freeCount > 0 ? freeIds[--freeCount] : newId();
    long[] p = pages[id >>> PAGE_BITS];
    int o = (id & PAGE_MASK) * STRIDE;
    p[o] = c;
    p[o + 1] = localHash;
    p[o + 2] = (long) parentId << 32;
    refPages[id >>> PAGE_BITS][id & PAGE_MASK] = 0;
    bigRefs.remove(id);
    if (parentId != NONE) {
      addRefs(parentId, 1);
    }
    table[pos] = tag | (id + 1);
    if (++count > (mask + 1) * 3 / 4) {
      rehash((mask + 1) * 2);
    }
    return id;
  }

  void retain(int id) {
    addRefs(id, 1);
  }

  /** Drops one reference; frees the node, then unreferenced ancestors, at zero. */
  void release(int id) {
    while (id != NONE) {
      addRefs(id, -1);
      if (refs(id) != 0) {
        return;
      }
      unlink(id);
      int up = parent(id);
      freeIds = grow(freeIds, freeCount + 1);
      freeIds[freeCount++] = id;
      id = up;
    }
  }

  /** The encoded slot set of {@code tier} ({@code 0} when empty). */
  int set(int id, int tier) {
    if (tier == 0) {
      return device(id);
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
      setDevice(id, added(device(id), slot));
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
      setDevice(id, removed(device(id), slot));
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
    if ((id >>> PAGE_BITS) == pageCount) {
      if (pageCount == pages.length) {
        pages = Arrays.copyOf(pages, pageCount * 2);
        refPages = Arrays.copyOf(refPages, pageCount * 2);
      }
      int n = pageCount == 0 ? 16 : PAGE;
      pages[pageCount] = new long[n * STRIDE];
      refPages[pageCount] = new byte[n];
      pageCount++;
    } else if (id < PAGE && id == refPages[0].length) {
      int n = Math.min(PAGE, id * 2);
      pages[0] = Arrays.copyOf(pages[0], n * STRIDE);
      refPages[0] = Arrays.copyOf(refPages[0], n);
    }
    return id;
  }

  private void unlink(int id) {
    long c = chain(id);
    int pos = (int) HashCommon.mix(c) & mask;
    while ((table[pos] & idMask) != id + 1) {
      pos = (pos + 1) & mask;
    }
    count--;
    for (; ; ) {
      int last = pos;
      pos = (pos + 1) & mask;
      int v;
      for (; ; ) {
        v = table[pos];
        if (v == 0) {
          table[last] = 0;
          return;
        }
        int home = (int) HashCommon.mix(chain((v & idMask) - 1)) & mask;
        if (last <= pos ? last >= home || home > pos : last >= home && home > pos) {
          break;
        }
        pos = (pos + 1) & mask;
      }
      table[last] = v;
    }
  }

  /**
   * Re-inserts every linked node, visiting ids in order (pages read sequentially, not in table
   * order): the linked ids are exactly those below {@code limit} that are not in {@code freeIds}.
   */
  private void rehash(int capacity) {
    int[] t = new int[capacity];
    int m = capacity - 1;
    long[] free = null;
    if (freeCount > 0) {
      free = new long[(limit + 63) >>> 6];
      for (int i = 0; i < freeCount; i++) {
        free[freeIds[i] >>> 6] |= 1L << freeIds[i];
      }
    }
    int linked = 0;
    for (int id = 0; id < limit; id++) {
      if (free != null && (free[id >>> 6] & (1L << id)) != 0) {
        continue;
      }
      linked++;
      long h = HashCommon.mix(chain(id));
      int pos = (int) h & m;
      while (t[pos] != 0) {
        pos = (pos + 1) & m;
      }
      t[pos] = ((int) (h >>> 33) & ~idMask) | (id + 1);
    }
    if (linked != count) {
      throw new IllegalStateException("linked ids " + linked + " != count " + count);
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
