package io.kvselect.core.pending;

import java.time.Clock;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Objects;

/**
 * Selections cached by {@code /select} for a later replay by {@code /reservations} (spec §5.3),
 * bounded by a TTL, a maximum entry count and an approximate byte budget; oldest entries are
 * evicted first.
 *
 * <p>Invariants: at most one entry per key (latest {@link #put} wins, and the replaced entry
 * gives up its order slot and bytes); after every {@code put}, {@code size() <= maxEntries} and
 * {@code bytes() <= maxBytes}; generations strictly increase across puts. The order index is the
 * map itself (a {@link LinkedHashMap} in insertion order, where a replacement re-enters at the
 * tail), so it never holds more than {@code size()} slots. An entry is live while
 * {@code now < inserted + ttl}; expired entries read as absent and are dropped when met.
 *
 * <p>Threading: not thread-safe. Its owner serializes every call; in the service that owner is
 * {@link LocalPendingStore}, which holds the cache behind its own monitor.
 *
 * <p>Complexity: {@link #peek}, {@link #remove} and {@link #removeIfGeneration} are O(1);
 * {@link #put} is O(1) amortized (each entry is swept or evicted at most once).
 *
 * @param <K> key, typically (partition, selection_id); needs equals and hashCode
 * @param <V> cached booking inputs
 */
public final class PendingSelectionCache<K, V> {

  /** Dynamo's defaults: 120 s, 4096 entries, 256 MiB. */
  public static final Duration DEFAULT_TTL = Duration.ofSeconds(120);

  public static final int DEFAULT_MAX_ENTRIES = 4096;
  public static final long DEFAULT_MAX_BYTES = 256L * 1024 * 1024;

  private static final class Slot<V> {
    final V value;
    final long bytes;
    final long generation;
    final long deadlineMillis;

    Slot(V value, long bytes, long generation, long deadlineMillis) {
      this.value = value;
      this.bytes = bytes;
      this.generation = generation;
      this.deadlineMillis = deadlineMillis;
    }
  }

  private final Clock clock;
  private final long ttlMillis;
  private final int maxEntries;
  private final long maxBytes;
  private final LinkedHashMap<K, Slot<V>> slots = new LinkedHashMap<>();
  private long bytes;
  private long nextGeneration = 1;

  public PendingSelectionCache(Clock clock, Duration ttl, int maxEntries, long maxBytes) {
    this.clock = Objects.requireNonNull(clock, "clock");
    if (ttl == null || ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
    if (maxEntries <= 0 || maxBytes <= 0) {
      throw new IllegalArgumentException("maxEntries and maxBytes must be positive");
    }
    this.ttlMillis = ttl.toMillis();
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
  }

  /** A cache with Dynamo's default limits. */
  public PendingSelectionCache(Clock clock) {
    this(clock, DEFAULT_TTL, DEFAULT_MAX_ENTRIES, DEFAULT_MAX_BYTES);
  }

  /**
   * Stores {@code value} under {@code key}, replacing any previous entry; then sweeps expired
   * entries from the oldest side and evicts oldest-first while over either cap. An entry larger
   * than the whole byte budget evicts itself at once: it is not stored, the entry it replaced is
   * gone, and no other entry is disturbed.
   *
   * @param bytes approximate size of the entry, {@code >= 0}
   * @return the entry's generation, for {@link #removeIfGeneration}
   */
  public long put(K key, V value, long bytes) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes must not be negative: " + bytes);
    }
    long generation = nextGeneration++;
    long now = clock.millis();
    drop(key);
    if (bytes > maxBytes) {
      sweep(now);
      return generation;
    }
    slots.put(key, new Slot<>(value, bytes, generation, now + ttlMillis));
    this.bytes += bytes;
    sweep(now);
    Iterator<Slot<V>> it = slots.values().iterator();
    while (slots.size() > maxEntries || this.bytes > maxBytes) {
      this.bytes -= it.next().bytes;
      it.remove();
    }
    return generation;
  }

  /** The live value under {@code key}, or null (absent or past its TTL). */
  public V peek(K key) {
    Slot<V> s = live(key);
    return s == null ? null : s.value;
  }

  /** The live value under {@code key} with its generation, or null. */
  public PendingEntry<V> peekEntry(K key) {
    Slot<V> s = live(key);
    return s == null ? null : new PendingEntry<>(s.value, s.generation);
  }

  /**
   * Removes the entry under {@code key} only if it is the one {@code generation} identifies, so
   * a newer put under the same key survives a late consume.
   *
   * @return true if a live entry of that generation was removed
   */
  public boolean removeIfGeneration(K key, long generation) {
    Slot<V> s = slots.get(key);
    if (s == null || s.generation != generation) {
      return false;
    }
    drop(key);
    return clock.millis() < s.deadlineMillis;
  }

  /** Removes the entry under {@code key}; returns its value if it was live, else null. */
  public V remove(K key) {
    Slot<V> s = drop(key);
    return s != null && clock.millis() < s.deadlineMillis ? s.value : null;
  }

  /** Entries held, including expired ones not yet swept. */
  public int size() {
    return slots.size();
  }

  /** Sum of the byte sizes of the entries held. */
  public long bytes() {
    return bytes;
  }

  private Slot<V> live(K key) {
    Slot<V> s = slots.get(key);
    if (s != null && clock.millis() >= s.deadlineMillis) {
      drop(key);
      return null;
    }
    return s;
  }

  private Slot<V> drop(K key) {
    Slot<V> s = slots.remove(key);
    if (s != null) {
      bytes -= s.bytes;
    }
    return s;
  }

  /** Drops expired entries from the oldest side, stopping at the first live one. */
  private void sweep(long now) {
    Iterator<Slot<V>> it = slots.values().iterator();
    while (it.hasNext()) {
      Slot<V> s = it.next();
      if (now < s.deadlineMillis) {
        return;
      }
      bytes -= s.bytes;
      it.remove();
    }
  }
}
