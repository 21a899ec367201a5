package io.kvselect.tools.loadgen;

import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.WorkerRank;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The merged timeline of a trace replay (Dynamo's {@code mooncake_bench} method): the trace's
 * requests are spread at random (seeded) over {@code workers / duplicate} unique simulated
 * workers; each worker's KV cache is simulated as an LRU of {@code cacheBlocks} blocks, which
 * turns every request into a lookup (all its blocks) followed, at the same instant, by the
 * removal of the blocks it evicts and the store of the blocks it did not have. {@code duplicate}
 * copies of every unique worker replay the same operations under distinct worker ids. Every
 * operation is timestamped with its request's trace time; the timeline of each replay thread is
 * sorted by that time (stable, so one worker's lookup, removal and store keep their order).
 *
 * <p>Blocks: trace id {@code h} stands for {@code blockSize} tokens all equal to {@code (int) h}
 * (as Dynamo's benchmark expands them). Its local hash is {@link BlockHasher#localBlockHashes} of
 * those tokens with the unsalted seed, so a lookup matches what a store of the same tokens
 * indexed; external hashes are the public sequence hashes, as the mocker publishes them. The
 * cache is keyed by external hash, so it mirrors the index exactly. Within one request the
 * deepest block is the least recently used, so eviction takes leaves before their parents (what
 * vLLM's free-block queue does). A request longer than the cache stores its first
 * {@code cacheBlocks} blocks only. Blocks generated while decoding are not simulated.
 *
 * <p>Operations ({@link #ops} entries): {@link Lookup}; in {@link Apply#INDEX} mode {@link Store}
 * and {@link Remove} with precomputed hashes; in {@link Apply#NODE} mode a decoded
 * {@link KvEventBatch} (one {@code BlockRemoved} or one {@code BlockStored} with its
 * {@code token_ids}) for the node's {@code EventApplier}.
 *
 * <p>Immutable after {@link #build}; the arrays are shared read-only by the replay threads.
 */
final class ReplayWorkload {

  /** How events reach the index. */
  enum Apply {
    /** {@code BlockIndex.store/remove} with precomputed local hashes, as Dynamo's benchmark. */
    INDEX,
    /** The node's {@code EventApplier} on decoded batches: token ids are hashed on apply. */
    NODE
  }

  record Lookup(long[] localHashes) {}

  record Store(boolean hasParent, long parentHash, long[] externalHashes, long[] localHashes) {}

  record Remove(long[] externalHashes) {}

  /** One replay thread's operations, sorted by {@code ticks} (microseconds of trace time). */
  static final class Timeline {
    final long[] ticks;
    final Object[] ops;
    final WorkerRank[] ranks;

    Timeline(long[] ticks, Object[] ops, WorkerRank[] ranks) {
      this.ticks = ticks;
      this.ops = ops;
      this.ranks = ranks;
    }

    int size() {
      return ops.length;
    }
  }

  /** Totals over all threads and duplicates. */
  record Counts(
      long requests,
      long lookups,
      long lookupBlocks,
      long storeEvents,
      long storedBlocks,
      long removeEvents,
      long removedBlocks,
      long cachedAtEnd) {

    long events() {
      return storeEvents + removeEvents;
    }
  }

  final int workers;
  final int duplicate;
  final int cacheBlocks;
  final int blockSize;
  final int threads;
  final Apply apply;
  final long spanMicros;
  final Counts counts;
  final Timeline[] timelines;

  private ReplayWorkload(
      int workers,
      int duplicate,
      int cacheBlocks,
      int blockSize,
      int threads,
      Apply apply,
      long spanMicros,
      Counts counts,
      Timeline[] timelines) {
    this.workers = workers;
    this.duplicate = duplicate;
    this.cacheBlocks = cacheBlocks;
    this.blockSize = blockSize;
    this.threads = threads;
    this.apply = apply;
    this.spanMicros = spanMicros;
    this.counts = counts;
    this.timelines = timelines;
  }

  private record Entry(long tick, Object op, WorkerRank rank) {}

  private record Assigned(MooncakeTrace.Request request, int worker) {}

  /**
   * Builds the timelines. {@code workers} must be a multiple of {@code duplicate}; ranks are
   * {@code (worker, 0)} with worker ids {@code 0 .. workers-1}, and a rank's operations go to
   * thread {@link ShardedBlockIndex#shardOf}{@code (rank, threads)}, the shard that owns it.
   */
  static ReplayWorkload build(
      List<MooncakeTrace.Request> trace,
      int workers,
      int duplicate,
      int cacheBlocks,
      int blockSize,
      long seed,
      int threads,
      Apply apply) {
    if (workers < 1 || duplicate < 1 || workers % duplicate != 0) {
      throw new IllegalArgumentException("--workers must be a positive multiple of --duplicate");
    }
    if (cacheBlocks < 1 || blockSize < 1 || threads < 1) {
      throw new IllegalArgumentException(
          "--cache-blocks, --block-size and --threads must be positive");
    }
    if (trace.isEmpty()) {
      throw new IllegalArgumentException("the trace has no request");
    }
    int unique = workers / duplicate;
    SplittableRandom rnd = new SplittableRandom(seed);
    List<Assigned> sorted = new ArrayList<>(trace.size());
    for (MooncakeTrace.Request r : trace) {
      sorted.add(new Assigned(r, rnd.nextInt(unique)));
    }
    // The assignment follows file order (seeded); the replay follows time order (stable).
    sorted.sort(Comparator.comparingLong(a -> a.request().timestampMs()));
    long t0 = sorted.get(0).request().timestampMs();
    long span = (sorted.get(sorted.size() - 1).request().timestampMs() - t0) * 1000;

    List<List<Entry>> perThread = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      perThread.add(new ArrayList<>());
    }
    WorkerRank[][] ranks = new WorkerRank[unique][duplicate];
    int[][] threadOf = new int[unique][duplicate];
    for (int w = 0; w < unique; w++) {
      for (int d = 0; d < duplicate; d++) {
        ranks[w][d] = new WorkerRank(w + (long) d * unique, 0);
        threadOf[w][d] = ShardedBlockIndex.shardOf(ranks[w][d], threads);
      }
    }
    List<LinkedHashMap<Long, Boolean>> caches = new ArrayList<>(unique);
    for (int w = 0; w < unique; w++) {
      caches.add(new LinkedHashMap<>(16, 0.75f, true));
    }
    Long2LongOpenHashMap localOf = new Long2LongOpenHashMap();
    int[] blockTokens = new int[blockSize];
    long lookupBlocks = 0;
    long storeEvents = 0;
    long storedBlocks = 0;
    long removeEvents = 0;
    long removedBlocks = 0;

    for (Assigned a : sorted) {
      MooncakeTrace.Request r = a.request();
      int w = a.worker();
      long tick = (r.timestampMs() - t0) * 1000;
      long[] ids = r.hashIds();
      long[] local = new long[ids.length];
      for (int i = 0; i < ids.length; i++) {
        long id = ids[i];
        if (!localOf.containsKey(id)) {
          Arrays.fill(blockTokens, (int) id);
          localOf.put(
              id,
              BlockHasher.localBlockHashes(
                  blockTokens, blockSize, blockSize, BlockHasher.saltSeed(null, null), false, null)[
                  0]);
        }
        local[i] = localOf.get(id);
      }
      long[] ext = BlockHasher.sequenceHashes(local);
      Lookup lookup = new Lookup(local);
      lookupBlocks += (long) local.length * duplicate;

      LinkedHashMap<Long, Boolean> cache = caches.get(w);
      int n = Math.min(ext.length, cacheBlocks);
      int k = 0;
      while (k < n && cache.containsKey(ext[k])) {
        k++;
      }
      touch(cache, ext, k);
      int need = n - k;
      long[] evicted = new long[Math.max(0, cache.size() + need - cacheBlocks)];
      Iterator<Long> eldest = cache.keySet().iterator();
      for (int e = 0; e < evicted.length; e++) {
        evicted[e] = eldest.next();
        eldest.remove();
      }
      for (int i = n - 1; i >= k; i--) {
        cache.put(ext[i], Boolean.TRUE);
      }
      touch(cache, ext, k);

      Object remove = null;
      if (evicted.length > 0) {
        remove =
            apply == Apply.INDEX
                ? new Remove(evicted)
                : batch(new BlockRemoved(evicted, null, null, null));
        removeEvents += duplicate;
        removedBlocks += (long) evicted.length * duplicate;
      }
      Object store = null;
      if (need > 0) {
        long[] sExt = Arrays.copyOfRange(ext, k, n);
        long parent = k > 0 ? ext[k - 1] : 0L;
        if (apply == Apply.INDEX) {
          store = new Store(k > 0, parent, sExt, Arrays.copyOfRange(local, k, n));
        } else {
          int[] tokens = new int[need * blockSize];
          for (int i = 0; i < need; i++) {
            Arrays.fill(tokens, i * blockSize, (i + 1) * blockSize, (int) ids[k + i]);
          }
          store =
              batch(
                  new BlockStored(
                      sExt, k > 0, parent, tokens, blockSize, null, null, null, null, null, null,
                      null));
        }
        storeEvents += duplicate;
        storedBlocks += (long) need * duplicate;
      }
      for (int d = 0; d < duplicate; d++) {
        List<Entry> out = perThread.get(threadOf[w][d]);
        WorkerRank rank = ranks[w][d];
        out.add(new Entry(tick, lookup, rank));
        if (remove != null) {
          out.add(new Entry(tick, remove, rank));
        }
        if (store != null) {
          out.add(new Entry(tick, store, rank));
        }
      }
    }

    long cached = 0;
    for (LinkedHashMap<Long, Boolean> c : caches) {
      cached += c.size();
    }
    Timeline[] timelines = new Timeline[threads];
    for (int t = 0; t < threads; t++) {
      List<Entry> list = perThread.get(t);
      list.sort(Comparator.comparingLong(Entry::tick));
      long[] ticks = new long[list.size()];
      Object[] ops = new Object[list.size()];
      WorkerRank[] rk = new WorkerRank[list.size()];
      for (int i = 0; i < ticks.length; i++) {
        Entry e = list.get(i);
        ticks[i] = e.tick();
        ops[i] = e.op();
        rk[i] = e.rank();
      }
      timelines[t] = new Timeline(ticks, ops, rk);
    }
    Counts counts =
        new Counts(
            sorted.size(),
            (long) sorted.size() * duplicate,
            lookupBlocks,
            storeEvents,
            storedBlocks,
            removeEvents,
            removedBlocks,
            cached * duplicate);
    return new ReplayWorkload(
        workers, duplicate, cacheBlocks, blockSize, threads, apply, span, counts, timelines);
  }

  /** Makes {@code ext[0 .. k)} the most recently used, {@code ext[0]} last (so evicted last). */
  private static void touch(LinkedHashMap<Long, Boolean> cache, long[] ext, int k) {
    for (int i = k - 1; i >= 0; i--) {
      cache.get(ext[i]);
    }
  }

  private static KvEventBatch batch(KvEvent event) {
    return new KvEventBatch(0.0, List.of(event), null);
  }
}
