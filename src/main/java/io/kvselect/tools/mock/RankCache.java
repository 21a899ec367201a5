package io.kvselect.tools.mock;

import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The prefix cache of one DP rank: at most {@code capacity} complete blocks keyed by their
 * sequence hash, evicted least-recently-used first.
 *
 * <p>A request's blocks are a chain: {@link #cachedPrefix} counts the leading blocks that are
 * cached. {@link #touchPrefix} and {@link #store} refresh a chain from its last block to its first,
 * so the first block is the most recent one and eviction takes a chain's tail before its head, as
 * vLLM's free-block queue does. Storing never evicts a block of the chain being stored as long as
 * the chain has at most {@code capacity} blocks.
 *
 * <p>Not thread-safe: owned by the event-loop thread of its engine. Lookups and stores cost
 * O(blocks of the request); an eviction is O(1).
 */
public final class RankCache {

  private final int capacity;
  private final LinkedHashMap<Long, Boolean> blocks;

  /** The outcome of {@link #store}: the blocks that were new, and the hashes evicted for them. */
  public record StoreResult(boolean[] inserted, long[] evicted) {}

  public RankCache(int capacity) {
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity must be positive: " + capacity);
    }
    this.capacity = capacity;
    this.blocks = new LinkedHashMap<>(Math.min(capacity, 1 << 16) * 2, 0.75f, true);
  }

  /** Number of leading blocks of {@code chain} that are cached; touches nothing. */
  public int cachedPrefix(long[] chain) {
    int n = 0;
    while (n < chain.length && blocks.containsKey(chain[n])) {
      n++;
    }
    return n;
  }

  /** Marks the first {@code count} blocks of {@code chain} (those that are cached) as used now. */
  public void touchPrefix(long[] chain, int count) {
    for (int i = Math.min(count, chain.length) - 1; i >= 0; i--) {
      blocks.get(chain[i]);
    }
  }

  /**
   * Caches every block of {@code chain}: cached blocks are touched, missing ones inserted, evicting
   * the least recently used blocks of other chains when full.
   *
   * @throws IllegalArgumentException when the chain is longer than the capacity
   */
  public StoreResult store(long[] chain) {
    if (chain.length > capacity) {
      throw new IllegalArgumentException(
          "request needs "
              + chain.length
              + " blocks, more than the "
              + capacity
              + " GPU blocks of a rank");
    }
    boolean[] inserted = new boolean[chain.length];
    int missing = 0;
    for (int i = 0; i < chain.length; i++) {
      if (!blocks.containsKey(chain[i])) {
        inserted[i] = true;
        missing++;
      }
    }
    List<Long> evicted = new ArrayList<>();
    int excess = blocks.size() + missing - capacity;
    LongOpenHashSet own = excess > 0 ? new LongOpenHashSet(chain) : null;
    Iterator<Long> lru = blocks.keySet().iterator();
    while (excess > 0) {
      long victim = lru.next();
      if (!own.contains(victim)) {
        lru.remove();
        evicted.add(victim);
        excess--;
      }
    }
    for (int i = chain.length - 1; i >= 0; i--) {
      blocks.put(chain[i], Boolean.TRUE);
    }
    return new StoreResult(inserted, evicted.stream().mapToLong(Long::longValue).toArray());
  }

  /** Drops every block. */
  public void clear() {
    blocks.clear();
  }

  /** Number of cached blocks. */
  public int size() {
    return blocks.size();
  }

  /** The block limit. */
  public int capacity() {
    return capacity;
  }
}
