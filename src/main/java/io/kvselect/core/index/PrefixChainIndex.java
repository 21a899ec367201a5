package io.kvselect.core.index;

import io.kvselect.core.hash.BlockHasher;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link BlockIndex} that replaces tree walking by a flat table keyed on prefix-chain hashes.
 *
 * <p><b>Mechanism.</b> A block at position {@code i} of a stored chain is identified by the chain
 * hash of the local hashes leading to it: {@code chain[0] = local[0]}, {@code chain[i] =
 * xxh3(LE64(chain[i-1]) || LE64(local[i]), 1337)} (the {@link BlockHasher#sequenceHashes} formula).
 * Equal chains mean equal prefixes (up to 64-bit collisions, which are accepted as in Dynamo's tree,
 * whose children are keyed by 64-bit local hashes), so one {@code chain -> node} table stands for
 * the whole radix tree. Nodes live in parallel primitive arrays ({@link ChainNodes}) and hold a
 * compact set of rank slots per tier; ranks are interned once to small int slots. Each (rank,
 * tier) maps {@code externalHash -> node} ({@link RankEntries}) for parent lookup and removal.
 * Nodes are reference-counted by those entries and by their children, so memory follows the live
 * entries.
 *
 * <p><b>Queries.</b> {@link #findMatches} ({@link ChainQuery}) computes the chain of the query's
 * local hashes and probes node after node until one is missing, then intersects rank slot sets
 * along the path; removed middle blocks cut the depth even though removal does not cascade. The
 * result is slot-indexed ({@link OverlapScores}), built without a map. Cost: O(q) chain hashes
 * and probes plus O(q * W + m + r), W = ranks / 64, m = members of small sets on the path, r =
 * ranks scored.
 * {@link #externalHashes} walks the same path and names each node by the rank's external hash.
 *
 * <p><b>Stores.</b> The parent is looked up in the rank's map of the same tier, then of the tiers
 * above it (a host block may extend a device block, never the reverse). Cost O(blocks) expected;
 * no allocation per block beyond amortized array and table growth.
 *
 * <p><b>Memory.</b> About 25 bytes per node plus 4-8 per table slot, and per (rank, tier, block)
 * 4-10 bytes when the external hash is the public sequence hash, 16-32 otherwise plus 13-27 on
 * the device tier, which also maps nodes back to those external hashes (see {@link RankEntries}).
 *
 * <p><b>Threading.</b> One writer at a time, and no reader while it writes (a single owner thread,
 * or {@link ShardedBlockIndex}'s read-write lock). Queries ({@link #findMatches},
 * {@link #externalHashes}) may run concurrently with each other: each thread uses its own scratch
 * buffers, and the rank-name snapshot ({@link RankSlots}), which the writer replaces in O(1) when
 * a rank joins on a fresh slot, is immutable and published through a volatile field.
 * {@link OverlapScores} results are immutable and hold that snapshot, never a live slot set, so
 * they stay valid after the reader releases its lock.
 *
 * <p><b>Known limitation.</b> A rank holding the same node under two external hashes holds it once;
 * removing either hash removes the membership.
 */
public final class PrefixChainIndex implements BlockIndex {

  private static final int TIERS = StorageTier.values().length;
  private static final long[] NO_HASHES = new long[0];

  private final ChainNodes nodes = new ChainNodes();

  /** Per-thread query scratch, so concurrent readers never share buffers. */
  private final ThreadLocal<ChainQuery> query = ThreadLocal.withInitial(ChainQuery::new);

  private final Map<WorkerRank, RankEntries> ranks = new HashMap<>();
  private final IntArrayList freeSlots = new IntArrayList();

  /** Names slots {@code 0 .. slotLimit - 1}; replaced by the writer, read by queries. */
  private volatile RankSlots snapshot = RankSlots.empty();

  private int slotLimit;
  private long size;
  private final long[] tierMembers = new long[TIERS];

  @Override
  public boolean store(
      WorkerRank rank,
      StorageTier tier,
      boolean hasParent,
      long parentExternalHash,
      long[] externalHashes,
      long[] localHashes) {
    if (externalHashes.length != localHashes.length) {
      throw new IllegalArgumentException("externalHashes and localHashes differ in length");
    }
    int t = tier.ordinal();
    RankEntries entries = ranks.get(rank);
    int parent = ChainNodes.NONE;
    if (hasParent) {
      parent = entries == null ? ChainNodes.NONE : entries.parent(t, parentExternalHash, nodes);
      if (parent == ChainNodes.NONE) {
        return false;
      }
    }
    if (localHashes.length == 0) {
      return true;
    }
    if (entries == null) {
      entries = register(rank);
    }
    int slot = entries.slot;
    long chain = parent == ChainNodes.NONE ? 0L : nodes.chain(parent);
    for (int i = 0; i < localHashes.length; i++) {
      long c = parent == ChainNodes.NONE ? localHashes[0] : ChainHash.chain(chain, localHashes[i]);
      int id = nodes.findOrCreate(c, localHashes[i], parent);
      if (!nodes.has(id, t, slot)) {
        nodes.add(id, t, slot);
        tierMembers[t]++;
      }
      int old = entries.put(t, externalHashes[i], id, nodes);
      if (old == ChainNodes.NONE) {
        nodes.retain(id);
        size++;
      } else if (old != id) {
        nodes.retain(id);
        dropMembership(old, t, slot);
        nodes.release(old);
      }
      chain = c;
      parent = id;
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
    for (long ext : externalHashes) {
      int id = entries.remove(t, ext, nodes);
      if (id != ChainNodes.NONE) {
        size--;
        dropMembership(id, t, entries.slot);
        nodes.release(id);
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
    int slot = entries.slot;
    entries.forEach(
        nodes,
        (t, ext, id) -> {
          dropMembership(id, t, slot);
          size--;
        });
    entries.forEach(nodes, (t, ext, id) -> nodes.release(id));
    freeSlots.push(slot);
    snapshot = snapshot.with(slot, null);
  }

  @Override
  public OverlapScores findMatches(long[] localHashes) {
    return query.get().find(localHashes, nodes, slotLimit, tierMembers, slots());
  }

  /** The current rank-name snapshot (slots {@code 0 .. slotLimit - 1}). */
  private RankSlots slots() {
    return snapshot;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Walks the query's chain as {@link #findMatches} does, then reads the rank's name of each
   * path node ({@link RankEntries#deviceExternal}). O(min(depth, q)) hashes and probes.
   */
  @Override
  public long[] externalHashes(WorkerRank rank, long[] localHashes, int depth) {
    RankEntries entries = ranks.get(rank);
    int n = Math.min(depth, localHashes.length);
    if (entries == null || n <= 0) {
      return NO_HASHES;
    }
    return query.get().externalHashes(localHashes, n, nodes, entries);
  }

  @Override
  public long size() {
    return size;
  }

  /**
   * Number of linked nodes: distinct block prefixes held by a rank, named by a stale external
   * hash, or ancestors of such.
   */
  public int nodeCount() {
    return nodes.count();
  }

  @Override
  public List<StoredBlock> dump() {
    List<RankEntries> ordered = new ArrayList<>(ranks.values());
    ordered.sort((a, b) -> a.rank.compareTo(b.rank));
    return ChainDump.dump(ordered, nodes);
  }

  private void dropMembership(int id, int t, int slot) {
    if (nodes.has(id, t, slot)) {
      nodes.remove(id, t, slot);
      tierMembers[t]--;
    }
  }

  private RankEntries register(WorkerRank rank) {
    int slot;
    if (freeSlots.isEmpty()) {
      slot = slotLimit++;
      snapshot = snapshot.append(rank);
    } else {
      slot = freeSlots.popInt();
      snapshot = snapshot.with(slot, rank);
    }
    RankEntries entries = new RankEntries(rank, slot);
    ranks.put(rank, entries);
    return entries;
  }
}
