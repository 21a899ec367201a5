package io.kvselect.core.index;

import java.util.Arrays;

/**
 * {@link PrefixChainIndex#findMatches} and {@link PrefixChainIndex#externalHashes}: the walk over
 * a query's chain hashes, the per-rank depth computation and the external hashes of one rank's
 * path, with the scratch buffers they reuse between calls.
 *
 * <p>Device depth: a bitset of active slots is intersected with each path node's device set; a
 * slot dropped at level {@code i} scores {@code i}. Lower tiers, in order host, disk, external:
 * a slot whose cumulative depth so far is {@code d} extends by the contiguous run of the tier's
 * path nodes starting at position {@code d} (a slot absent so far starts at the root). Cost
 * O(q) hashes and table probes plus O(q * W + m) where W = slot words (ranks / 64) and m =
 * members of the path's sets, except that once at most {@code max(2, W / 8)} slots are live the
 * device walk tests them one by one (O(live) per level); lower tiers are skipped while empty.
 * {@link #find} allocates the result only: one {@code RankOverlap[slots]} (device-only overlaps
 * are shared instances); {@link #append} allocates nothing once the scratch has grown to the
 * slot count.
 *
 * <p>Not thread-safe: scratch of one querying thread (the index keeps one per thread).
 */
final class ChainQuery {

  private static final int TIERS = StorageTier.values().length;

  private static final int CHUNK = 8;
  private static final int FIRST_CHUNK = 4;

  /**
   * {@link #matchDevice} switches to testing slots one by one once at most
   * {@code max(SPARSE_MIN, words >> SPARSE_SHIFT)} are live.
   */
  private static final int SPARSE_MIN = 2;

  private static final int SPARSE_SHIFT = 3;

  private int[] path = new int[64];
  private long[] hashes = new long[64];
  private long[] active = new long[1];
  private long[] next = new long[1];
  private int[] cumulative = new int[64];
  private final int[][] extension = new int[TIERS][64];
  private boolean[] seen = new boolean[64];
  private int[] touched = new int[64];

  /** Live slots of {@link #matchSparse}. */
  private int[] sparse = new int[16];

  private int touchedCount;
  private RankOverlap[] deviceOnly = new RankOverlap[0];

  /**
   * Scores {@code q} against {@code nodes}; {@code slotLimit} bounds the slots in use,
   * {@code tierMembers[t]} counts tier {@code t}'s memberships (a tier with none is skipped).
   */
  OverlapScores find(
      long[] q, ChainNodes nodes, int slotLimit, long[] tierMembers, RankSlots slots) {
    if (!score(q, nodes, slotLimit, tierMembers)) {
      return OverlapScores.EMPTY;
    }
    return collect(slotLimit, slots);
  }

  /** Fills the per-slot scratch for {@code q}; false when no rank scores. */
  private boolean score(long[] q, ChainNodes nodes, int slotLimit, long[] tierMembers) {
    int k = walk(q, q.length, nodes);
    if (k == 0) {
      return false;
    }
    ensureSlots(slotLimit);
    int words = (slotLimit + 63) >>> 6;
    touchedCount = 0;
    matchDevice(nodes, k, words);
    for (int t = 1; t < TIERS; t++) {
      if (tierMembers[t] > 0) {
        extendTier(nodes, t, k);
      }
    }
    return touchedCount > 0;
  }

  /**
   * The external hashes under which {@code entries}' rank stored the leading blocks of
   * {@code q[0 .. n)} on the device tier: entry {@code i} names path node {@code i}, up to the
   * first node the rank does not hold. O(n) hashes and probes; allocates the result only.
   */
  long[] externalHashes(long[] q, int n, ChainNodes nodes, RankEntries entries) {
    int k = walk(q, n, nodes);
    long[] out = new long[k];
    int i = 0;
    while (i < k
        && nodes.has(path[i], 0, entries.slot)
        && entries.deviceExternal(path[i], nodes, out, i)) {
      i++;
    }
    return i == k ? out : Arrays.copyOf(out, i);
  }

  private void ensureSlots(int slotLimit) {
    int words = (slotLimit + 63) >>> 6;
    if (active.length < words) {
      active = new long[words];
      next = new long[words];
    }
    if (cumulative.length < slotLimit) {
      int cap = Math.max(slotLimit, cumulative.length * 2);
      cumulative = Arrays.copyOf(cumulative, cap);
      seen = Arrays.copyOf(seen, cap);
      touched = Arrays.copyOf(touched, cap);
      for (int t = 0; t < TIERS; t++) {
        extension[t] = Arrays.copyOf(extension[t], cap);
      }
    }
  }

  /**
   * Fills {@code path} with the node ids of the longest stored prefix of {@code q[0 .. n)};
   * returns its length. Works in chunks of levels ({@link #FIRST_CHUNK}, then twice as many up to
   * {@link #CHUNK}): hash the chunk, probe every level, then check them in order. The probes of a
   * chunk do not depend on each other, so their cache misses overlap instead of queueing behind
   * one another; a chunk past the first miss costs at most its size - 1 wasted probes, few for
   * the short paths of an index that holds only the query's first blocks.
   */
  private int walk(long[] q, int n, ChainNodes nodes) {
    if (path.length < n) {
      path = new int[n];
      hashes = new long[n];
    }
    if (n == 0) {
      return 0;
    }
    int[] p = path;
    long[] h = hashes;
    int id = nodes.find(q[0]);
    if (id == ChainNodes.NONE || nodes.local(id) != q[0]) {
      return 0;
    }
    p[0] = id;
    long chain = q[0];
    int size = FIRST_CHUNK;
    for (int from = 1; from < n; from += size, size = Math.min(CHUNK, size * 2)) {
      int to = Math.min(n, from + size);
      for (int i = from; i < to; i++) {
        chain = ChainHash.chain(chain, q[i]);
        h[i] = chain;
      }
      for (int i = from; i < to; i++) {
        p[i] = nodes.find(h[i]);
      }
      for (int i = from; i < to; i++) {
        int v = p[i];
        if (v == ChainNodes.NONE || nodes.local(v) != q[i]) {
          return i;
        }
      }
    }
    return n;
  }

  private void matchDevice(ChainNodes nodes, int k, int words) {
    int first = nodes.device(path[0]);
    if (first == 0) {
      return;
    }
    long[] act = active;
    int live = load(nodes, first, act);
    int sparseAt = Math.max(SPARSE_MIN, words >>> SPARSE_SHIFT);
    int i = 1;
    for (; i < k && live > 0; i++) {
      if (live <= sparseAt) {
        matchSparse(nodes, k, words, i);
        return;
      }
      int enc = nodes.device(path[i]);
      if (enc == 0) {
        break;
      }
      Object set = enc < 0 ? nodes.pooled(enc) : null;
      if (set instanceof long[]) {
        long[] bits = (long[]) set;
        for (int w = 0; w < words; w++) {
          long a = act[w];
          if (a == 0) {
            continue;
          }
          long keep = w < bits.length ? a & bits[w] : 0L;
          long drop = a & ~keep;
          if (drop != 0) {
            act[w] = keep;
            live -= Long.bitCount(drop);
            recordDevice(drop, w, i);
          }
        }
        continue;
      }
      if (enc > 0) {
        int only = enc - 1;
        int w0 = only >>> 6;
        long bit = 1L << only;
        boolean keep = (act[w0] & bit) != 0;
        if (keep && live == 1) {
          continue;
        }
        for (int w = 0; w < words; w++) {
          long kept = keep && w == w0 ? bit : 0L;
          long drop = act[w] & ~kept;
          if (drop != 0) {
            act[w] = kept;
            live -= Long.bitCount(drop);
            recordDevice(drop, w, i);
          }
        }
        continue;
      }
      long[] nxt = next;
      int[] small = (int[]) set;
      for (int j = 1, n = small[0]; j <= n; j++) {
        mark(small[j], act, nxt);
      }
      for (int w = 0; w < words; w++) {
        long drop = act[w] & ~nxt[w];
        if (drop != 0) {
          live -= Long.bitCount(drop);
          recordDevice(drop, w, i);
        }
        act[w] = nxt[w];
        nxt[w] = 0L;
      }
    }
    for (int w = 0; w < words && live > 0; w++) {
      if (act[w] != 0) {
        live -= Long.bitCount(act[w]);
        recordDevice(act[w], w, i);
      }
    }
    Arrays.fill(act, 0, words, 0L);
  }

  /**
   * The end of {@link #matchDevice} once few slots are left: from level {@code from} on, each
   * live slot is tested against each path node's set, O(live) per level instead of O(words).
   * Records each slot where it drops out (one single-bit record) and clears {@code active}.
   */
  private void matchSparse(ChainNodes nodes, int k, int words, int from) {
    long[] act = active;
    int[] ls = sparse;
    int n = 0;
    for (int w = 0; w < words; w++) {
      for (long b = act[w]; b != 0; b &= b - 1) {
        if (n == ls.length) {
          ls = Arrays.copyOf(ls, n * 2);
          sparse = ls;
        }
        ls[n++] = (w << 6) + Long.numberOfTrailingZeros(b);
      }
      act[w] = 0L;
    }
    int i = from;
    for (; i < k && n > 0; i++) {
      int enc = nodes.device(path[i]);
      Object set = enc < 0 ? nodes.pooled(enc) : null;
      int kept = 0;
      for (int j = 0; j < n; j++) {
        int s = ls[j];
        boolean in = enc > 0 ? enc - 1 == s : enc < 0 && SlotSet.contains(set, s);
        if (in) {
          ls[kept++] = s;
        } else {
          recordDevice(1L << s, s >>> 6, i);
        }
      }
      n = kept;
    }
    for (int j = 0; j < n; j++) {
      recordDevice(1L << ls[j], ls[j] >>> 6, i);
    }
  }

  private static void mark(int s, long[] act, long[] nxt) {
    if ((act[s >>> 6] & (1L << s)) != 0) {
      nxt[s >>> 6] |= 1L << s;
    }
  }

  private static int load(ChainNodes nodes, int enc, long[] act) {
    if (enc > 0) {
      act[(enc - 1) >>> 6] |= 1L << (enc - 1);
      return 1;
    }
    Object set = nodes.pooled(enc);
    if (set instanceof long[]) {
      long[] bits = (long[]) set;
      int live = 0;
      for (int w = 0; w < bits.length && w < act.length; w++) {
        act[w] = bits[w];
        live += Long.bitCount(bits[w]);
      }
      return live;
    }
    int[] small = (int[]) set;
    for (int j = 1, n = small[0]; j <= n; j++) {
      act[small[j] >>> 6] |= 1L << small[j];
    }
    return small[0];
  }

  private void recordDevice(long bits, int word, int depth) {
    while (bits != 0) {
      int slot = (word << 6) + Long.numberOfTrailingZeros(bits);
      bits &= bits - 1;
      cumulative[slot] = depth;
      seen[slot] = true;
      touched[touchedCount++] = slot;
    }
  }

  private void extendTier(ChainNodes nodes, int t, int k) {
    int[] ext = extension[t];
    for (int i = 0; i < k; i++) {
      int enc = nodes.set(path[i], t);
      if (enc == 0) {
        continue;
      }
      if (enc > 0) {
        extendSlot(enc - 1, i, ext);
        continue;
      }
      Object set = nodes.pooled(enc);
      if (set instanceof long[]) {
        long[] bits = (long[]) set;
        for (int w = 0; w < bits.length; w++) {
          for (long b = bits[w]; b != 0; b &= b - 1) {
            extendSlot((w << 6) + Long.numberOfTrailingZeros(b), i, ext);
          }
        }
      } else {
        int[] small = (int[]) set;
        for (int j = 1, n = small[0]; j <= n; j++) {
          extendSlot(small[j], i, ext);
        }
      }
    }
  }

  private void extendSlot(int slot, int position, int[] ext) {
    if (cumulative[slot] == position) {
      cumulative[slot] = position + 1;
      ext[slot]++;
      if (!seen[slot]) {
        seen[slot] = true;
        touched[touchedCount++] = slot;
      }
    }
  }

  private OverlapScores collect(int slotLimit, RankSlots slots) {
    RankOverlap[] out = new RankOverlap[slotLimit];
    int[] host = extension[1];
    int[] disk = extension[2];
    int[] external = extension[3];
    for (int j = 0; j < touchedCount; j++) {
      int s = touched[j];
      int h = host[s];
      int d = disk[s];
      int e = external[s];
      int device = cumulative[s] - h - d - e;
      out[s] = (h | d | e) == 0 ? deviceOnly(device) : new RankOverlap(device, h, d, e);
      cumulative[s] = 0;
      host[s] = 0;
      disk[s] = 0;
      external[s] = 0;
      seen[s] = false;
    }
    return new OverlapScores(slots, out, touchedCount);
  }

  private RankOverlap deviceOnly(int depth) {
    if (depth >= deviceOnly.length) {
      RankOverlap[] grown = Arrays.copyOf(deviceOnly, Math.max(depth + 1, deviceOnly.length * 2));
      for (int d = deviceOnly.length; d < grown.length; d++) {
        grown[d] = new RankOverlap(d, 0, 0, 0);
      }
      deviceOnly = grown;
    }
    return deviceOnly[depth];
  }
}
