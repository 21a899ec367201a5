package io.kvselect.core.history;

import java.util.ArrayList;
import java.util.List;

/**
 * The last {@code capacity} samples of a time series, oldest first; adding to a full ring drops
 * the oldest. O(1) per add, O(capacity) per snapshot.
 *
 * <p>Ownership: one writer (the node's history sampler, on its timer) and any number of readers
 * (HTTP handlers); every method holds this ring's monitor, so a snapshot never sees half an add.
 *
 * @param <T> an immutable sample
 */
public final class SampleRing<T> {

  private final Object[] slots;
  private int next;
  private int size;

  /** A ring of {@code capacity} samples, at least 1. */
  public SampleRing(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
    }
    this.slots = new Object[capacity];
  }

  /** Appends {@code sample}, dropping the oldest when the ring is full. */
  public synchronized void add(T sample) {
    slots[next] = java.util.Objects.requireNonNull(sample, "sample");
    next = (next + 1) % slots.length;
    size = Math.min(size + 1, slots.length);
  }

  /** The samples held now, oldest first. */
  @SuppressWarnings("unchecked")
  public synchronized List<T> snapshot() {
    List<T> out = new ArrayList<>(size);
    int first = (next - size + slots.length) % slots.length;
    for (int i = 0; i < size; i++) {
      out.add((T) slots[(first + i) % slots.length]);
    }
    return out;
  }

  public int capacity() {
    return slots.length;
  }
}
