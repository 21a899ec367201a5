package io.kvselect.core.pending;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A {@link PendingStore} held in this process: one {@link PendingSelectionCache} (TTL, entry and
 * byte caps, oldest evicted first) shared by every partition of the node.
 *
 * <p>Threading: owns the cache; every operation synchronizes on this instance (a leaf lock held
 * for O(1) amortized work that never calls out), and every returned stage is already complete.
 *
 * @param <K> key
 * @param <V> value
 */
public final class LocalPendingStore<K, V> implements PendingStore<K, V> {

  private final PendingSelectionCache<K, V> cache;

  public LocalPendingStore(Clock clock, Duration ttl, int maxEntries, long maxBytes) {
    this.cache = new PendingSelectionCache<>(clock, ttl, maxEntries, maxBytes);
  }

  @Override
  public CompletionStage<Long> put(K key, V value, long bytes) {
    long generation;
    synchronized (this) {
      generation = cache.put(key, value, bytes);
    }
    return CompletableFuture.completedFuture(generation);
  }

  @Override
  public CompletionStage<PendingEntry<V>> peek(K key) {
    PendingEntry<V> e;
    synchronized (this) {
      e = cache.peekEntry(key);
    }
    return CompletableFuture.completedFuture(e);
  }

  @Override
  public CompletionStage<Boolean> removeIfGeneration(K key, long generation) {
    boolean removed;
    synchronized (this) {
      removed = cache.removeIfGeneration(key, generation);
    }
    return CompletableFuture.completedFuture(removed);
  }

  @Override
  public CompletionStage<Void> remove(K key) {
    synchronized (this) {
      cache.remove(key);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized int size() {
    return cache.size();
  }

  /** Sum of the byte sizes of the entries held. */
  public synchronized long bytes() {
    return cache.bytes();
  }
}
