package io.kvselect.core.index;

/**
 * Where {@link ChainQuery#append} writes one index's answer: {@link MatchBuffer} (one entry per
 * scored rank) or {@link MatchLevels} (one record per dropped bitset word). The query calls
 * {@link #beginSource} once, then the add methods; every rank slot is added at most once.
 *
 * <p>An abstract class rather than an interface so that these methods stay package-private on
 * the public result types. Implementations are owned by one thread at a time (the caller of the
 * lookup).
 */
abstract class MatchSink {

  /**
   * Names the rank slots of the entries added next: {@code slots} is the answering index's
   * immutable snapshot; slots are below {@code slotLimit}.
   */
  abstract void beginSource(RankSlots slots, int slotLimit);

  /**
   * Device-only depth {@code d} for every slot {@code base + b} with bit {@code b} set in
   * {@code bits}; {@code base} is a multiple of 64.
   */
  abstract void addSlots(int base, long bits, int d);

  /** One slot's device depth {@code d} and lower-tier extensions {@code h}, {@code dk}, {@code e}. */
  abstract void addSlot(int s, int d, int h, int dk, int e);
}
