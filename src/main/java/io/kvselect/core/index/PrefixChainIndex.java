package io.kvselect.core.index;

import io.kvselect.core.hash.BlockHasher;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link BlockIndex} that replaces tree walking by a flat map keyed on prefix-chain hashes.
 *
 * <p><b>Mechanism.</b> A block at position {@code i} of a stored chain is identified by the chain
 * hash of the local hashes leading to it: {@code chain[0] = local[0]}, {@code chain[i] =
 * xxh3(LE64(chain[i-1]) || LE64(local[i]), 1337)} (the {@link BlockHasher#sequenceHashes} formula).
 * Equal chains mean equal prefixes (up to 64-bit collisions, which are accepted as in Dynamo's tree,
 * whose children are keyed by 64-bit local hashes), so one {@code chain -> node} map stands for the
 * whole radix tree. Each node ({@link ChainNode}) holds a compact set of rank slots per tier
 * ({@link SlotSet}). Each (rank, tier) keeps {@code externalHash -> node} for parent lookup and
 * removal. Nodes without holders are unlinked, so memory follows the live entries.
 *
 * <p><b>Queries.</b> {@link #findMatches} computes the chain of the query's local hashes and looks
 * up node after node until one is missing. The device depth of each rank is found by intersecting
 * a bitset of active slots with each node's device set; a rank dropped at level {@code i} scores
 * {@code i}, so removed middle blocks cut the depth even though removal does not cascade. Lower
 * tiers are then walked in order host, disk, external: a rank whose cumulative depth so far is
 * {@code d} extends by the contiguous run of the tier's nodes starting at position {@code d} (a rank
 * absent so far starts at the root). Cost: O(q) chain hashes and map probes plus O(q * (W + m))
 * where W = slot words (ranks / 64) and m = members of small sets on the path; lower tiers add only
 * their own members on the path and are skipped while empty.
 *
 * <p><b>Stores.</b> The parent is looked up in the rank's map of the same tier, then of the tiers
 * above it (a host block may extend a device block, never the reverse). Cost O(blocks) map
 * operations; no per-block allocation except new nodes and map growth.
 *
 * <p><b>Threading.</b> Not thread-safe: a single owner thread serializes every call, queries
 * included (queries reuse scratch buffers of the instance).
 *
 * <p><b>Known limitation.</b> A rank holding the same node under two external hashes holds it once;
 * removing either hash removes the membership.
 */
public final class PrefixChainIndex implements BlockIndex {

  private static final int TIERS = StorageTier.values().length;

  private final Long2ObjectOpenHashMap<ChainNode> nodes = new Long2ObjectOpenHashMap<>();
  private final Map<WorkerRank, RankEntries> ranks = new HashMap<>();
  private final IntArrayList freeSlots = new IntArrayList();
  private RankEntries[] bySlot = new RankEntries[64];
  private int slotLimit;
  private long size;
  private final long[] tierMembers = new long[TIERS];

  private final long[] pair = new long[2];
  private ChainNode[] path = new ChainNode[64];
  private long[] active = new long[1];
  private long[] next = new long[1];
  private int[] cumulative = new int[64];
  private int[][] extension = new int[TIERS][64];
  private boolean[] seen = new boolean[64];
  private int[] touched = new int[64];
  private int touchedCount;
  private RankOverlap[] deviceOnly = new RankOverlap[0];

  @Override
  public boolean store(
      WorkerRank rank, StorageTier tier, boolean hasParent, long parentExternalHash,
      long[] externalHashes, long[] localHashes) {
    if (externalHashes.length != localHashes.length) {
      throw new IllegalArgumentException("externalHashes and localHashes differ in length");
    }
    int t = tier.ordinal();
    RankEntries entries = ranks.get(rank);
    ChainNode parent = null;
    if (hasParent) {
      parent = entries == null ? null : entries.parent(t, parentExternalHash);
      if (parent == null) {
        return false;
      }
    }
    if (localHashes.length == 0) {
      return true;
    }
    if (entries == null) {
      entries = register(rank);
    }
    Long2ObjectOpenHashMap<ChainNode> lookup = entries.lookupOrCreate(t);
    int slot = entries.slot;
    long chain = parent == null ? 0L : parent.chain;
    int depth = parent == null ? 0 : parent.depth + 1;
    for (int i = 0; i < localHashes.length; i++, depth++) {
      long c = depth == 0 ? localHashes[0] : BlockHasher.chain(chain, localHashes[i], pair);
      ChainNode node = nodes.get(c);
      if (node == null) {
        node = new ChainNode(c, localHashes[i], chain, depth);
        nodes.put(c, node);
      }
      if (!node.has(t, slot)) {
        node.add(t, slot);
        tierMembers[t]++;
      }
      ChainNode old = lookup.put(externalHashes[i], node);
      if (old == null) {
        size++;
      } else if (old != node) {
        dropMembership(old, t, slot);
      }
      chain = c;
    }
    return true;
  }

  @Override
  public void remove(WorkerRank rank, StorageTier tier, long[] externalHashes) {
    RankEntries entries = ranks.get(rank);
    if (entries == null) {
      return;
    }
    int t = tier.ordinal();
    Long2ObjectOpenHashMap<ChainNode> lookup = entries.lookups[t];
    if (lookup == null) {
      return;
    }
    for (long ext : externalHashes) {
      ChainNode node = lookup.remove(ext);
      if (node != null) {
        size--;
        dropMembership(node, t, entries.slot);
      }
    }
  }

  @Override
  public void clearWorker(long workerId) {
    List<WorkerRank> doomed = new ArrayList<>();
    for (WorkerRank r : ranks.keySet()) {
      if (r.workerId() == workerId) {
        doomed.add(r);
      }
    }
    doomed.forEach(this::removeRank);
  }

  @Override
  public void removeRank(WorkerRank rank) {
    RankEntries entries = ranks.remove(rank);
    if (entries == null) {
      return;
    }
    for (int t = 0; t < TIERS; t++) {
      Long2ObjectOpenHashMap<ChainNode> lookup = entries.lookups[t];
      if (lookup != null) {
        for (ChainNode node : lookup.values()) {
          dropMembership(node, t, entries.slot);
        }
        size -= lookup.size();
      }
    }
    bySlot[entries.slot] = null;
    freeSlots.push(entries.slot);
  }

  @Override
  public OverlapScores findMatches(long[] localHashes) {
    int k = walk(localHashes);
    if (k == 0) {
      return OverlapScores.EMPTY;
    }
    int words = (slotLimit + 63) >>> 6;
    if (active.length < words) {
      active = new long[words];
      next = new long[words];
    }
    touchedCount = 0;
    matchDevice(k, words);
    for (int t = 1; t < TIERS; t++) {
      if (tierMembers[t] > 0) {
        extendTier(t, k);
      }
    }
    return collect();
  }

  @Override
  public long size() {
    return size;
  }

  /** Number of distinct block prefixes (nodes) currently held by at least one rank. */
  public int nodeCount() {
    return nodes.size();
  }

  @Override
  public List<StoredBlock> dump() {
    List<RankEntries> ordered = new ArrayList<>(ranks.values());
    ordered.sort((a, b) -> a.rank.compareTo(b.rank));
    return ChainDump.dump(ordered, nodes);
  }

  private int walk(long[] q) {
    if (path.length < q.length) {
      path = new ChainNode[q.length];
    }
    long chain = 0L;
    int k = 0;
    for (int i = 0; i < q.length; i++) {
      chain = i == 0 ? q[0] : BlockHasher.chain(chain, q[i], pair);
      ChainNode node = nodes.get(chain);
      if (node == null || node.local != q[i]) {
        break;
      }
      path[k++] = node;
    }
    return k;
  }

  private void matchDevice(int k, int words) {
    Object first = path[0].device;
    if (first == null) {
      return;
    }
    long[] act = active;
    int live = load(first, act);
    int i = 1;
    for (; i < k && live > 0; i++) {
      Object set = path[i].device;
      if (set == null) {
        break;
      }
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
      } else {
        int[] small = (int[]) set;
        long[] nxt = next;
        for (int j = 1, n = small[0]; j <= n; j++) {
          int s = small[j];
          if ((act[s >>> 6] & (1L << s)) != 0) {
            nxt[s >>> 6] |= 1L << s;
          }
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
    }
    for (int w = 0; w < words && live > 0; w++) {
      if (act[w] != 0) {
        live -= Long.bitCount(act[w]);
        recordDevice(act[w], w, i);
      }
    }
    Arrays.fill(act, 0, words, 0L);
  }

  private static int load(Object set, long[] act) {
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

  private void extendTier(int t, int k) {
    int[] ext = extension[t];
    for (int i = 0; i < k; i++) {
      ChainNode node = path[i];
      Object set = node.lower == null ? null : node.lower[t - 1];
      if (set == null) {
        continue;
      }
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

  private OverlapScores collect() {
    if (touchedCount == 0) {
      return OverlapScores.EMPTY;
    }
    Map<WorkerRank, RankOverlap> out = new HashMap<>(touchedCount * 4 / 3 + 1);
    int[] host = extension[1];
    int[] disk = extension[2];
    int[] external = extension[3];
    for (int j = 0; j < touchedCount; j++) {
      int s = touched[j];
      int h = host[s];
      int d = disk[s];
      int e = external[s];
      int device = cumulative[s] - h - d - e;
      RankOverlap o = (h | d | e) == 0 ? deviceOnly(device) : new RankOverlap(device, h, d, e);
      out.put(bySlot[s].rank, o);
      cumulative[s] = 0;
      host[s] = 0;
      disk[s] = 0;
      external[s] = 0;
      seen[s] = false;
    }
    return new OverlapScores(out);
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

  private void dropMembership(ChainNode node, int t, int slot) {
    if (!node.has(t, slot)) {
      return;
    }
    node.remove(t, slot);
    tierMembers[t]--;
    if (node.holders == 0 && nodes.get(node.chain) == node) {
      nodes.remove(node.chain);
    }
  }

  private RankEntries register(WorkerRank rank) {
    int slot = freeSlots.isEmpty() ? slotLimit++ : freeSlots.popInt();
    if (slot >= bySlot.length) {
      int cap = Math.max(slot + 1, bySlot.length * 2);
      bySlot = Arrays.copyOf(bySlot, cap);
      cumulative = Arrays.copyOf(cumulative, cap);
      seen = Arrays.copyOf(seen, cap);
      touched = Arrays.copyOf(touched, cap);
      for (int t = 0; t < TIERS; t++) {
        extension[t] = Arrays.copyOf(extension[t], cap);
      }
    }
    RankEntries entries = new RankEntries(rank, slot);
    bySlot[slot] = entries;
    ranks.put(rank, entries);
    return entries;
  }
}
