package io.kvselect.core.index;

import java.util.Arrays;

/**
 * Static operations on a compact set of two or more rank slots (small non-negative ints), held in
 * an {@code Object} so a node pays for only the representation it needs ({@link ChainNodes} keeps
 * empty and single-member sets inline in an int and pools these objects):
 *
 * <ul>
 *   <li>{@code null}: empty;
 *   <li>{@code int[]}: {@code a[0]} is the size, {@code a[1..size]} the slots in ascending order;
 *       used up to {@link #SMALL_MAX} members (4 bytes per member plus the array header);
 *   <li>{@code long[]}: a bitset indexed by slot, used above {@link #SMALL_MAX} members, so a block
 *       shared by many ranks costs one bit per rank slot and intersects word-at-a-time.
 * </ul>
 *
 * <p>Callers check {@link #contains} before {@link #add} or {@link #remove}; both return the
 * (possibly reallocated) set, {@code remove} returns null once the set is empty. Not thread-safe:
 * the owning index's writer thread mutates sets. Add and remove cost O(SMALL_MAX) on small sets and
 * O(1) amortized on bitsets (plus an O(words) emptiness check on removal).
 */
final class SlotSet {

  /** Largest member count kept as a sorted array. */
  static final int SMALL_MAX = 16;

  private SlotSet() {}

  static boolean contains(Object set, int slot) {
    if (set == null) {
      return false;
    }
    if (set instanceof long[]) {
      long[] bits = (long[]) set;
      int w = slot >>> 6;
      return w < bits.length && (bits[w] & (1L << slot)) != 0;
    }
    int[] a = (int[]) set;
    return Arrays.binarySearch(a, 1, a[0] + 1, slot) >= 0;
  }

  static Object add(Object set, int slot) {
    if (set == null) {
      return new int[] {1, slot};
    }
    if (set instanceof long[]) {
      long[] bits = (long[]) set;
      int w = slot >>> 6;
      if (w >= bits.length) {
        bits = Arrays.copyOf(bits, w + 1);
      }
      bits[w] |= 1L << slot;
      return bits;
    }
    int[] a = (int[]) set;
    int n = a[0];
    if (n == SMALL_MAX) {
      int maxSlot = Math.max(slot, a[n]);
      long[] bits = new long[(maxSlot >>> 6) + 1];
      for (int i = 1; i <= n; i++) {
        bits[a[i] >>> 6] |= 1L << a[i];
      }
      bits[slot >>> 6] |= 1L << slot;
      return bits;
    }
    if (n + 1 == a.length) {
      a = Arrays.copyOf(a, Math.min(1 + SMALL_MAX, 1 + 2 * n));
    }
    int pos = -Arrays.binarySearch(a, 1, n + 1, slot) - 1;
    System.arraycopy(a, pos, a, pos + 1, n + 1 - pos);
    a[pos] = slot;
    a[0] = n + 1;
    return a;
  }

  /**
   * The only member of {@code set}, {@code 0} for an empty set, {@code -1} when it has two or
   * more members. O(words) on bitsets.
   */
  static int single(Object set) {
    if (set == null) {
      return 0;
    }
    if (set instanceof long[]) {
      long[] bits = (long[]) set;
      int found = -1;
      for (int w = 0; w < bits.length; w++) {
        if (bits[w] != 0) {
          if (found >= 0 || Long.bitCount(bits[w]) > 1) {
            return -1;
          }
          found = (w << 6) + Long.numberOfTrailingZeros(bits[w]);
        }
      }
      return found < 0 ? 0 : found;
    }
    int[] a = (int[]) set;
    return a[0] == 1 ? a[1] : -1;
  }

  static Object remove(Object set, int slot) {
    if (set instanceof long[]) {
      long[] bits = (long[]) set;
      bits[slot >>> 6] &= ~(1L << slot);
      for (long w : bits) {
        if (w != 0) {
          return bits;
        }
      }
      return null;
    }
    int[] a = (int[]) set;
    int n = a[0];
    if (n == 1) {
      return null;
    }
    int pos = Arrays.binarySearch(a, 1, n + 1, slot);
    System.arraycopy(a, pos + 1, a, pos, n - pos);
    a[0] = n - 1;
    return a;
  }
}
