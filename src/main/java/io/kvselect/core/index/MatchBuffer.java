package io.kvselect.core.index;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * A caller-owned, reusable result of {@link BlockIndex#findMatches(long[], MatchBuffer)}: per
 * scored rank, the device depth and the lower-tier extensions (the fields of a
 * {@link RankOverlap}), in parallel arrays that grow to the largest result seen and are then
 * reused, so a query that fills it allocates nothing. Entries are in no particular order; a rank
 * appears at most once. Reading it costs O(1) per entry; {@link #toScores} copies it into an
 * immutable {@link OverlapScores} (allocating) for code that keeps the result.
 *
 * <p>Not thread-safe: owned by one thread at a time (typically one per event loop or per replay
 * thread); the index only writes into it during the call.
 */
public final class MatchBuffer extends MatchSink {

  /**
   * Entry {@code i}'s rank: {@code sources[source[i]].rank(slot[i])}, or {@code ranks[i]} when
   * {@code source[i] < 0} (entries copied from an index that answers with {@link OverlapScores}).
   */
  private int[] slot = new int[16];
  private int[] source = new int[16];
  private WorkerRank[] ranks = new WorkerRank[16];
  private RankSlots[] sources = new RankSlots[4];
  private int sourceCount;
  private int current = -1;
  private int[] device = new int[16];
  private int[] host = new int[16];
  private int[] disk = new int[16];
  private int[] external = new int[16];
  private int size;
  /** False while every entry is device-only: {@code host}, {@code disk}, {@code external} unused. */
  private boolean lower;

  /** Number of scored ranks. */
  public int size() {
    return size;
  }

  public boolean isEmpty() {
    return size == 0;
  }

  public WorkerRank rank(int i) {
    int src = source[i];
    return src < 0 ? ranks[i] : sources[src].rank(slot[i]);
  }

  /** Leading blocks of the query held on the device tier by entry {@code i}'s rank. */
  public int device(int i) {
    return device[i];
  }

  public int hostExtension(int i) {
    return lower ? host[i] : 0;
  }

  public int diskExtension(int i) {
    return lower ? disk[i] : 0;
  }

  public int externalExtension(int i) {
    return lower ? external[i] : 0;
  }

  /** Device depth plus every lower-tier extension of entry {@code i}. */
  public int totalBlocks(int i) {
    return lower ? device[i] + host[i] + disk[i] + external[i] : device[i];
  }

  /** Entry {@code i} as a {@link RankOverlap} (allocates). */
  public RankOverlap overlap(int i) {
    return new RankOverlap(device[i], hostExtension(i), diskExtension(i), externalExtension(i));
  }

  /** An immutable copy (allocates a map of {@link #size} entries). */
  public OverlapScores toScores() {
    if (size == 0) {
      return OverlapScores.EMPTY;
    }
    Map<WorkerRank, RankOverlap> m = new HashMap<>(size * 4 / 3 + 1);
    for (int i = 0; i < size; i++) {
      m.put(rank(i), overlap(i));
    }
    return new OverlapScores(m);
  }

  /**
   * Forgets every entry. Keeps the arrays, and the references to the last result's ranks and
   * slot snapshots until they are overwritten (both are immutable).
   */
  public void clear() {
    size = 0;
    lower = false;
    sourceCount = 0;
    current = -1;
  }

  /**
   * Names the slots of the entries {@link #addSlot} and {@link #addSlots} append next: an index's rank-slot snapshot,
   * stored once per index answering instead of one rank reference per entry (which would cost
   * a GC write barrier per entry on a long-lived buffer).
   */
  @Override
  void beginSource(RankSlots slots, int slotLimit) {
    if (sourceCount == sources.length) {
      sources = Arrays.copyOf(sources, sourceCount * 2);
    }
    sources[sourceCount] = slots;
    current = sourceCount++;
  }

  /** Appends one entry; the caller guarantees {@code rank} is not in the buffer yet. */
  void add(WorkerRank rank, int d, int h, int dk, int e) {
    int i = append(d, h, dk, e);
    source[i] = -1;
    ranks[i] = rank;
  }

  /**
   * Appends one entry for slot {@code s} of the current source ({@link #beginSource}); the
   * caller guarantees its rank is not in the buffer yet.
   */
  @Override
  void addSlot(int s, int d, int h, int dk, int e) {
    int i = append(d, h, dk, e);
    source[i] = current;
    slot[i] = s;
  }

  /**
   * Appends a device-only entry at depth {@code d} for every slot {@code base + b} of the current
   * source with bit {@code b} set in {@code bits}, in one loop; the caller guarantees none of their
   * ranks is in the buffer yet.
   */
  @Override
  void addSlots(int base, long bits, int d) {
    int i = size;
    int end = i + Long.bitCount(bits);
    if (end > device.length) {
      ensure(end);
    }
    int[] sl = slot;
    int[] dv = device;
    int[] src = source;
    int cur = current;
    for (long b = bits; b != 0; b &= b - 1) {
      sl[i] = base + Long.numberOfTrailingZeros(b);
      dv[i] = d;
      src[i] = cur;
      i++;
    }
    if (lower) {
      Arrays.fill(host, size, end, 0);
      Arrays.fill(disk, size, end, 0);
      Arrays.fill(external, size, end, 0);
    }
    size = end;
  }

  private int append(int d, int h, int dk, int e) {
    if ((h | dk | e) != 0 && !lower) {
      lower = true;
      ensure(size + 1);
      Arrays.fill(host, 0, size, 0);
      Arrays.fill(disk, 0, size, 0);
      Arrays.fill(external, 0, size, 0);
    }
    int i = size;
    ensure(i + 1);
    device[i] = d;
    if (lower) {
      host[i] = h;
      disk[i] = dk;
      external[i] = e;
    }
    size = i + 1;
    return i;
  }

  private void ensure(int n) {
    if (n > device.length) {
      int cap = Math.max(n, device.length * 2);
      slot = Arrays.copyOf(slot, cap);
      source = Arrays.copyOf(source, cap);
      ranks = Arrays.copyOf(ranks, cap);
      device = Arrays.copyOf(device, cap);
      host = Arrays.copyOf(host, cap);
      disk = Arrays.copyOf(disk, cap);
      external = Arrays.copyOf(external, cap);
    }
  }

  void add(WorkerRank rank, RankOverlap o) {
    add(rank, o.device(), o.hostExtension(), o.diskExtension(), o.externalExtension());
  }
}
