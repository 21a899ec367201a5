package io.kvselect.core.index;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An immutable snapshot of a {@link PrefixChainIndex}'s rank interning: slot {@code s <}
 * {@link #limit} names {@link #rank}{@code (s)} (null for a free slot). Shared by every result
 * computed while the set of ranks does not change.
 *
 * <p>Snapshots of one <i>generation</i> share their name array and their {@code rank -> slot}
 * map, so that a rank joining on a fresh slot costs O(1) ({@link #append}) instead of a copy of
 * every name: the writer only ever writes array cells and map keys at or above every existing
 * snapshot's limit, and a snapshot ignores slots at or above its own. Freeing a slot or reusing a
 * freed one starts a new generation ({@link #with}, O(slots)), so a cell below a published limit
 * never changes. Thread-safety: {@link #rank} and {@link #slotOf} may run on any thread while the
 * index's writer appends (the map is concurrent; the array cells a snapshot reads were written
 * before the snapshot was published, through a volatile field or a lock); {@link #append} and
 * {@link #with} are called by that writer only. {@link #slotOf} costs O(1) expected.
 */
final class RankSlots {

  /** Shared by the snapshots of one generation; cells below {@link #limit} never change. */
  private final WorkerRank[] ranks;

  /** Shared by the snapshots of one generation; only keys of slots below {@link #limit} count. */
  private final ConcurrentHashMap<WorkerRank, Integer> slots;

  private final int limit;

  private RankSlots(WorkerRank[] ranks, ConcurrentHashMap<WorkerRank, Integer> slots, int limit) {
    this.ranks = ranks;
    this.slots = slots;
    this.limit = limit;
  }

  /** A snapshot of {@code names} (slot {@code s} named {@code names[s]}, null when free). */
  static RankSlots of(WorkerRank[] names) {
    WorkerRank[] copy = Arrays.copyOf(names, Math.max(16, names.length));
    ConcurrentHashMap<WorkerRank, Integer> map =
        new ConcurrentHashMap<>(Math.max(16, names.length * 2));
    for (int s = 0; s < names.length; s++) {
      if (names[s] != null) {
        map.put(names[s], s);
      }
    }
    return new RankSlots(copy, map, names.length);
  }

  /** The empty snapshot of a new index. */
  static RankSlots empty() {
    return of(new WorkerRank[0]);
  }

  /**
   * This snapshot plus {@code rank} on the next slot ({@link #limit}), in the same generation
   * when its array has room (O(1)), else with the array grown (amortized O(1)). Writer only, on
   * the index's latest snapshot.
   */
  RankSlots append(WorkerRank rank) {
    WorkerRank[] a = ranks;
    if (limit == a.length) {
      a = Arrays.copyOf(a, a.length * 2);
    }
    a[limit] = rank;
    slots.put(rank, limit);
    return new RankSlots(a, slots, limit + 1);
  }

  /**
   * A new generation where slot {@code slot} (below {@link #limit}) names {@code rank} (null to
   * free it). O(slots). Writer only, on the index's latest snapshot.
   */
  RankSlots with(int slot, WorkerRank rank) {
    WorkerRank[] names = Arrays.copyOf(ranks, limit);
    names[slot] = rank;
    return of(names);
  }

  /** The slot of {@code rank}, -1 when unknown. */
  int slotOf(WorkerRank rank) {
    Integer s = slots.get(rank);
    return s == null || s >= limit || !rank.equals(ranks[s]) ? -1 : s;
  }

  /** The rank of slot {@code slot} (below {@link #limit}), null when free. */
  WorkerRank rank(int slot) {
    if (slot >= limit) {
      throw new ArrayIndexOutOfBoundsException(slot);
    }
    return ranks[slot];
  }

  /** Number of slots this snapshot names (free ones included). */
  int limit() {
    return limit;
  }
}
