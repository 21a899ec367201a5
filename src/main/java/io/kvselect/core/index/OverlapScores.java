package io.kvselect.core.index;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * Result of {@link BlockIndex#findMatches}: per rank, the tiered prefix depth. A rank that holds
 * no leading block of the query on any tier is absent. Value semantics: two instances are equal
 * when {@link #ranks()} are equal, whatever their representation.
 *
 * <p>Three representations. Built from a map (the public constructor, used by {@link OverlapMerge}
 * and tests), it wraps that map. Built by {@link PrefixChainIndex}, it holds one
 * {@link RankOverlap} per rank slot of the index (null when absent) and a shared snapshot of the
 * slot interning, so a query allocates one array instead of a map; {@link #ranks()} is then built
 * on first call and cached. {@link #of} is O(1) expected in both forms; {@link #forEach} and
 * {@link #size} never build the map. Built by {@link ShardedBlockIndex}, it holds one part per
 * shard ({@link #sharded}); a rank is looked up in the part of its shard only, so merging the
 * shards' answers costs O(shards) instead of a map of every scored rank.
 *
 * <p>Immutable and safe to share between threads once returned.
 */
public final class OverlapScores {

  public static final OverlapScores EMPTY = new OverlapScores(Collections.emptyMap());

  private final RankSlots slots;
  private final RankOverlap[] bySlot;
  private final int size;
  private final OverlapScores[] parts;
  private volatile Map<WorkerRank, RankOverlap> map;

  /** Scores of the ranks in {@code ranks} (wrapped, not copied: the caller must not mutate it). */
  public OverlapScores(Map<WorkerRank, RankOverlap> ranks) {
    this.map = Collections.unmodifiableMap(Objects.requireNonNull(ranks, "ranks"));
    this.slots = null;
    this.bySlot = null;
    this.size = ranks.size();
    this.parts = null;
  }

  OverlapScores(RankSlots slots, RankOverlap[] bySlot, int size) {
    this.slots = slots;
    this.bySlot = bySlot;
    this.size = size;
    this.parts = null;
  }

  private OverlapScores(OverlapScores[] parts, int size) {
    this.slots = null;
    this.bySlot = null;
    this.size = size;
    this.parts = parts;
  }

  /**
   * The union of per-shard results: {@code parts[s]} scores only ranks whose
   * {@link ShardedBlockIndex#shardOf}{@code (rank, parts.length)} is {@code s}.
   */
  static OverlapScores sharded(OverlapScores[] parts) {
    int n = 0;
    for (OverlapScores p : parts) {
      n += p.size;
    }
    return n == 0 ? EMPTY : new OverlapScores(parts, n);
  }

  /** The overlap of {@code rank}, {@link RankOverlap#NONE} when absent. */
  public RankOverlap of(WorkerRank rank) {
    if (parts != null) {
      return parts[ShardedBlockIndex.shardOf(rank, parts.length)].of(rank);
    }
    if (bySlot == null) {
      RankOverlap o = map.get(rank);
      return o == null ? RankOverlap.NONE : o;
    }
    int s = slots.slotOf(rank);
    RankOverlap o = s < 0 || s >= bySlot.length ? null : bySlot[s];
    return o == null ? RankOverlap.NONE : o;
  }

  /** Number of ranks with a non-empty overlap. */
  public int size() {
    return size;
  }

  public boolean isEmpty() {
    return size == 0;
  }

  /** Visits every scored rank (in no particular order) without building {@link #ranks()}. */
  public void forEach(BiConsumer<? super WorkerRank, ? super RankOverlap> action) {
    if (parts != null) {
      for (OverlapScores p : parts) {
        p.forEach(action);
      }
      return;
    }
    if (bySlot == null) {
      map.forEach(action);
      return;
    }
    for (int s = 0; s < bySlot.length; s++) {
      if (bySlot[s] != null) {
        action.accept(slots.rank(s), bySlot[s]);
      }
    }
  }

  /** Every scored rank as an unmodifiable map (built once, on first call, for slot results). */
  public Map<WorkerRank, RankOverlap> ranks() {
    Map<WorkerRank, RankOverlap> m = map;
    if (m == null) {
      Map<WorkerRank, RankOverlap> built = new HashMap<>(size * 4 / 3 + 1);
      forEach(built::put);
      m = Collections.unmodifiableMap(built);
      map = m;
    }
    return m;
  }

  @Override
  public boolean equals(Object o) {
    return o == this || (o instanceof OverlapScores && ranks().equals(((OverlapScores) o).ranks()));
  }

  @Override
  public int hashCode() {
    return ranks().hashCode();
  }

  @Override
  public String toString() {
    return "OverlapScores[ranks=" + ranks() + "]";
  }
}
