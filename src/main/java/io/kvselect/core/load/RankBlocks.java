package io.kvselect.core.load;

import it.unimi.dsi.fastutil.longs.Long2DoubleOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;

/**
 * The active state of one rank: a refcount per sequence hash (a block shared by several requests
 * counts once), decay weights for blocks held by a single request, and the prefill and request
 * totals.
 *
 * <p>Invariants: every weighted hash is active; {@code deficit == Σ (1 - weight)} over weighted
 * hashes (reset to exactly 0 whenever no weight remains, so float drift cannot accumulate); a
 * weight exists only while its block's refcount is 1. Owned by {@link ActiveLoad}; all operations
 * are O(1) expected.
 */
final class RankBlocks {

  private static final double ABSENT = -1.0;

  private final Long2IntOpenHashMap refcounts = new Long2IntOpenHashMap();
  private final Long2DoubleOpenHashMap weights = new Long2DoubleOpenHashMap();
  private double deficit;
  long prefillTokens;
  int requests;

  RankBlocks() {
    weights.defaultReturnValue(ABSENT);
  }

  /** One more holder of {@code hash}; a block that becomes shared regains its full weight. */
  void touch(long hash) {
    if (refcounts.addTo(hash, 1) == 1) {
      clearWeight(hash);
    }
  }

  /** One holder less; the block leaves the rank when its count reaches 0. */
  void release(long hash) {
    int before = refcounts.addTo(hash, -1);
    if (before <= 1) {
      refcounts.remove(hash);
      clearWeight(hash);
    }
  }

  /** No block is active (no request holds one): every prompt block would be fresh here. */
  boolean isIdle() {
    return refcounts.isEmpty();
  }

  boolean isActive(long hash) {
    return refcounts.containsKey(hash);
  }

  boolean heldOnce(long hash) {
    return refcounts.get(hash) == 1;
  }

  /** Sets the weight of an active block; 1.0 restores the full weight. */
  void weigh(long hash, double fraction) {
    clearWeight(hash);
    if (fraction < 1.0) {
      weights.put(hash, fraction);
      deficit += 1.0 - fraction;
    }
  }

  private void clearWeight(long hash) {
    if (weights.isEmpty()) {
      return;
    }
    double w = weights.remove(hash);
    if (w != ABSENT) {
      deficit = weights.isEmpty() ? 0.0 : deficit - (1.0 - w);
    }
  }

  long activeDecodeBlocks() {
    return Math.round(Math.max(0.0, refcounts.size() - deficit));
  }

  RankLoad load() {
    return new RankLoad(activeDecodeBlocks(), prefillTokens, requests);
  }
}
