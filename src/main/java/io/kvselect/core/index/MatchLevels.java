package io.kvselect.core.index;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * A caller-owned, reusable result of {@link BlockIndex#findMatchLevels}: the same ranks and
 * overlaps as {@link BlockIndex#findMatches(long[])}, kept by the depth at which ranks drop out of
 * the query's path instead of one entry per rank, so that filling it costs O(levels x words)
 * rather than O(ranks scored). A consumer reads a rank's overlap on demand ({@link #device},
 * {@link #of}) or visits every scored rank ({@link #forEach}, O(ranks scored)).
 *
 * <p><b>Representation.</b> Each answering index (one per shard) is a source with its
 * immutable rank-slot snapshot; its records are contiguous. A record {@code (word, bits, depth)}
 * says that every rank slot {@code 64 * word + b} of its source with bit {@code b} set in
 * {@code bits} holds exactly the first {@code depth} blocks of the query on the device tier. The
 * walk emits one record per bitset word in which ranks drop out at a level while many ranks are
 * live, then one single-bit record per slot once few are left; so a block held by thousands of
 * ranks followed by blocks held by a few costs about {@code ranks / 64} records, not thousands of
 * entries. Where an index holds lower-tier blocks, each scored slot gets its own single-bit record
 * with its host, disk and external extensions. On the first read by rank the records of each
 * source are linked by word ({@code heads}, {@code recNext}; O(records + words)); then
 * {@link #device} costs one {@link RankSlots#slotOf} per source plus a walk of that word's records
 * (at most 64). Entries of an index without rank slots (the {@link BlockIndex} default) are kept
 * by rank in a map.
 *
 * <p><b>Ownership and concurrency.</b> Not thread-safe: owned by one thread at a time, typically
 * one per event loop or replay thread; the index writes into it only during the lookup. Nothing in
 * it refers to a live structure of the index: records are copies of bitset words taken while the
 * index was read (under {@link ShardedBlockIndex}'s shard read lock), and the rank names come
 * from the index's {@link RankSlots} snapshot, which is immutable. Writers may therefore change
 * the index as soon as the lookup returns; the result keeps describing the index as that lookup
 * saw it.
 *
 * <p>Arrays grow to the largest result seen and are then reused: a lookup that fills it
 * allocates nothing once grown. {@link #toScores} allocates, {@link #of} only for a lower-tier
 * overlap; {@link #device}, {@link #totalBlocks} and {@link #forEach} with a reused visitor do
 * not.
 */
public final class MatchLevels extends MatchSink {

  /** Receives one scored rank of {@link #forEach}. */
  @FunctionalInterface
  public interface Visitor {
    void accept(WorkerRank rank, int device, int host, int disk, int external);
  }

  private RankSlots[] sources = new RankSlots[4];
  /** Per source: where its word heads start in {@link #heads}, -1 when it has no record. */
  private int[] headBase = new int[4];
  /** Per source: words of its slot range (the heads {@link #chain} reserves for it). */
  private int[] words = new int[4];
  /** Per source: its first record (a source's records are contiguous). */
  private int[] firstRecord = new int[4];
  private int sourceCount;
  /** Per (source, word): the last record of that word, -1 for none. */
  private int[] heads = new int[64];
  private int headTop;
  /** True once {@link #heads} and {@code recNext} link the current records ({@link #chain}). */
  private boolean chained;

  private int[] recWord = new int[16];
  private long[] recBits = new long[16];
  private int[] recDevice = new int[16];
  private int[] recNext = new int[16];
  private int[] recHost = new int[16];
  private int[] recDisk = new int[16];
  private int[] recExternal = new int[16];
  private int records;
  /** False while every record is device-only: the lower-tier record arrays are unused. */
  private boolean lower;

  private int size;
  private int maxDevice;
  /** Shared device-only overlaps by depth, for {@link #of}. */
  private RankOverlap[] deviceOnly = new RankOverlap[0];
  /** Entries of indexes without rank slots (the {@link BlockIndex} default path). */
  private final Map<WorkerRank, RankOverlap> named = new HashMap<>();

  /** Number of scored ranks. O(1). */
  public int size() {
    return size;
  }

  public boolean isEmpty() {
    return size == 0;
  }

  /**
   * Number of records the lookup produced (its cost in result writes): one per dropped bitset
   * word, or per scored rank on the lower-tier path.
   */
  public int records() {
    return records + named.size();
  }

  /** The deepest device overlap of any rank: the length of the query's matched path. */
  public int maxDevice() {
    return maxDevice;
  }

  /** Leading blocks of the query that {@code rank} holds on the device tier (0 when unscored). */
  public int device(WorkerRank rank) {
    int r = find(rank);
    if (r >= 0) {
      return recDevice[r];
    }
    return named.isEmpty() ? 0 : namedOf(rank).device();
  }

  /** Device depth plus every lower-tier extension of {@code rank} (0 when unscored). */
  public int totalBlocks(WorkerRank rank) {
    int r = find(rank);
    if (r >= 0) {
      return lower ? recDevice[r] + recHost[r] + recDisk[r] + recExternal[r] : recDevice[r];
    }
    return named.isEmpty() ? 0 : namedOf(rank).totalBlocks();
  }

  /**
   * The overlap of {@code rank}, {@link RankOverlap#NONE} when unscored. Device-only overlaps are
   * shared instances (no allocation once every depth has been seen); a lower-tier one allocates.
   */
  public RankOverlap of(WorkerRank rank) {
    int r = find(rank);
    if (r >= 0) {
      boolean tiered = lower && (recHost[r] | recDisk[r] | recExternal[r]) != 0;
      return tiered ? new RankOverlap(recDevice[r], recHost[r], recDisk[r], recExternal[r])
          : deviceOnly(recDevice[r]);
    }
    return named.isEmpty() ? RankOverlap.NONE : namedOf(rank);
  }

  private RankOverlap deviceOnly(int depth) {
    if (depth >= deviceOnly.length) {
      RankOverlap[] grown = Arrays.copyOf(deviceOnly, Math.max(depth + 1, deviceOnly.length * 2));
      for (int d = deviceOnly.length; d < grown.length; d++) {
        grown[d] = new RankOverlap(d, 0, 0, 0);
      }
      deviceOnly = grown;
    }
    return deviceOnly[depth];
  }

  /** Visits every scored rank once, in no particular order. O(ranks scored + records). */
  public void forEach(Visitor v) {
    for (int src = 0; src < sourceCount; src++) {
      RankSlots names = sources[src];
      int end = src + 1 < sourceCount ? firstRecord[src + 1] : records;
      for (int r = firstRecord[src]; r < end; r++) {
        int base = recWord[r] << 6;
        int d = recDevice[r];
        int h = lower ? recHost[r] : 0;
        int dk = lower ? recDisk[r] : 0;
        int e = lower ? recExternal[r] : 0;
        for (long b = recBits[r]; b != 0; b &= b - 1) {
          v.accept(names.rank(base + Long.numberOfTrailingZeros(b)), d, h, dk, e);
        }
      }
    }
    if (!named.isEmpty()) {
      named.forEach((rank, o) -> v.accept(rank, o.device(), o.hostExtension(),
          o.diskExtension(), o.externalExtension()));
    }
  }

  /** An immutable copy (allocates a map of {@link #size} entries). */
  public OverlapScores toScores() {
    if (size == 0) {
      return OverlapScores.EMPTY;
    }
    Map<WorkerRank, RankOverlap> m = new HashMap<>(size * 4 / 3 + 1);
    forEach((rank, d, h, dk, e) -> m.put(rank, new RankOverlap(d, h, dk, e)));
    return new OverlapScores(m);
  }

  /** Forgets every record; keeps the arrays (and stale references to immutable snapshots). */
  public void clear() {
    size = 0;
    maxDevice = 0;
    records = 0;
    lower = false;
    sourceCount = 0;
    headTop = 0;
    chained = false;
    if (!named.isEmpty()) {
      named.clear();
    }
  }

  /** The record holding {@code rank}'s slot, or -1. */
  private int find(WorkerRank rank) {
    if (!chained) {
      chain();
    }
    for (int src = 0; src < sourceCount; src++) {
      int s = sources[src].slotOf(rank);
      if (s < 0) {
        continue;
      }
      int hb = headBase[src];
      int w = s >>> 6;
      if (hb < 0 || w >= words[src]) {
        return -1;
      }
      long bit = 1L << s;
      for (int r = heads[hb + w]; r >= 0; r = recNext[r]) {
        if ((recBits[r] & bit) != 0) {
          return r;
        }
      }
      return -1;
    }
    return -1;
  }

  private RankOverlap namedOf(WorkerRank rank) {
    RankOverlap o = named.get(rank);
    return o == null ? RankOverlap.NONE : o;
  }

  /**
   * Links each source's records by word, once per result, on the first read by rank: O(records +
   * words of the sources that have records). A lookup that is only visited never pays for it.
   */
  private void chain() {
    for (int src = 0; src < sourceCount; src++) {
      int first = firstRecord[src];
      int end = src + 1 < sourceCount ? firstRecord[src + 1] : records;
      if (first == end) {
        headBase[src] = -1;
        continue;
      }
      int hb = reserveHeads(words[src]);
      headBase[src] = hb;
      for (int r = first; r < end; r++) {
        int h = hb + recWord[r];
        recNext[r] = heads[h];
        heads[h] = r;
      }
    }
    chained = true;
  }

  @Override
  void beginSource(RankSlots slots, int slotLimit) {
    if (sourceCount == sources.length) {
      int cap = sourceCount * 2;
      sources = Arrays.copyOf(sources, cap);
      headBase = Arrays.copyOf(headBase, cap);
      words = Arrays.copyOf(words, cap);
      firstRecord = Arrays.copyOf(firstRecord, cap);
    }
    firstRecord[sourceCount] = records;
    sources[sourceCount] = slots;
    chained = false;
    words[sourceCount] = (slotLimit + 63) >>> 6;
    sourceCount++;
  }

  @Override
  void addSlots(int base, long bits, int d) {
    int r = record(base >>> 6, bits, d);
    if (lower) {
      recHost[r] = 0;
      recDisk[r] = 0;
      recExternal[r] = 0;
    }
    size += Long.bitCount(bits);
  }

  @Override
  void addSlot(int s, int d, int h, int dk, int e) {
    if ((h | dk | e) != 0 && !lower) {
      lower = true;
      ensureRecords(records + 1);
      Arrays.fill(recHost, 0, records, 0);
      Arrays.fill(recDisk, 0, records, 0);
      Arrays.fill(recExternal, 0, records, 0);
    }
    int r = record(s >>> 6, 1L << s, d);
    if (lower) {
      recHost[r] = h;
      recDisk[r] = dk;
      recExternal[r] = e;
    }
    size++;
  }

  /** Adds an entry of an index without rank slots; the caller guarantees it is new. */
  void addNamed(WorkerRank rank, RankOverlap o) {
    named.put(rank, o);
    maxDevice = Math.max(maxDevice, o.device());
    size++;
  }

  private int record(int word, long bits, int d) {
    int r = records;
    if (r == recBits.length) {
      ensureRecords(r + 1);
    }
    recWord[r] = word;
    recBits[r] = bits;
    recDevice[r] = d;
    records = r + 1;
    if (d > maxDevice) {
      maxDevice = d;
    }
    return r;
  }

  private int reserveHeads(int n) {
    int hb = headTop;
    if (hb + n > heads.length) {
      heads = Arrays.copyOf(heads, Math.max(hb + n, heads.length * 2));
    }
    Arrays.fill(heads, hb, hb + n, -1);
    headTop = hb + n;
    return hb;
  }

  private void ensureRecords(int n) {
    if (n > recBits.length) {
      int cap = Math.max(n, recBits.length * 2);
      recWord = Arrays.copyOf(recWord, cap);
      recBits = Arrays.copyOf(recBits, cap);
      recDevice = Arrays.copyOf(recDevice, cap);
      recNext = Arrays.copyOf(recNext, cap);
      recHost = Arrays.copyOf(recHost, cap);
      recDisk = Arrays.copyOf(recDisk, cap);
      recExternal = Arrays.copyOf(recExternal, cap);
    }
  }
}
