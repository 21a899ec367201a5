package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Writers and readers of one {@link ShardedBlockIndex} on separate threads, as KV-event ingestion
 * and selections use it: writer threads apply per-worker sequences of stores, removals, rank
 * resets and worker clears (the writes {@code KvEventsCoordinator} makes for a batch, a reset or an
 * {@code AllBlocksCleared}), reader threads call {@code findMatches} in a loop and visit every
 * scored rank of each {@link OverlapScores}. No exception may
 * escape any thread, and the final index must equal a plain {@link PrefixChainIndex} fed the same
 * sequences one after another: ranks do not influence each other's entries, so any interleaving of
 * the per-worker sequences ends in the same state.
 *
 * <p>Seeded; bounded in count (writes per worker, reads per reader) and in time (readers stop when
 * the writers are done or at a deadline, whichever comes first).
 */
class ShardedBlockIndexStressTest {

  private static final int WORKERS = 24;
  private static final int RANKS_PER_WORKER = 2;
  private static final int WRITERS = 2;
  private static final int OPS_PER_WORKER = 4_000;
  private static final int MAX_READS_PER_READER = 400_000;
  private static final long READ_DEADLINE_MS = 20_000;
  private static final int FAMILIES = 6;
  private static final int FAMILY_BLOCKS = 48;

  /** One index write of a worker's sequence. */
  private sealed interface Op {
    void apply(BlockIndex index);
  }

  private record Store(
      WorkerRank rank, StorageTier tier, boolean hasParent, long parent, long[] ext, long[] local)
      implements Op {
    @Override
    public void apply(BlockIndex index) {
      index.store(rank, tier, hasParent, parent, ext, local);
    }
  }

  private record Remove(WorkerRank rank, StorageTier tier, long[] ext) implements Op {
    @Override
    public void apply(BlockIndex index) {
      index.remove(rank, tier, ext);
    }
  }

  private record ResetRank(WorkerRank rank) implements Op {
    @Override
    public void apply(BlockIndex index) {
      index.removeRank(rank);
    }
  }

  private record ClearWorker(long workerId) implements Op {
    @Override
    public void apply(BlockIndex index) {
      index.clearWorker(workerId);
    }
  }

  /** The outcome of one concurrent run. */
  record Outcome(List<Throwable> failures, long reads) {}

  /**
   * (shards, reader threads, seed). Two readers hold one shard's read lock at once, as selections
   * on two event loops do; before queries had per-thread scratch buffers that corrupted each
   * other's query (an {@code ArrayIndexOutOfBoundsException} within about 20,000 reads).
   */
  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(1, 1, 11L),
        Arguments.of(1, 2, 12L),
        Arguments.of(4, 1, 11L),
        Arguments.of(4, 2, 12L),
        Arguments.of(1, 3, 13L));
  }

  @ParameterizedTest(name = "{0} shard(s), {1} reader(s), seed {2}")
  @MethodSource("cases")
  @Timeout(value = 90, unit = TimeUnit.SECONDS)
  void concurrentWritesAndReadsEndInTheSerialState(int shards, int readers, long seed)
      throws Exception {
    long[][] families = families(seed);
    List<List<Op>> sequences = sequences(seed, families);
    BlockIndex index = new ShardedBlockIndex(shards, PrefixChainIndex::new);

    Outcome outcome = run(index, sequences, queries(families), readers);

    assertTrue(
        outcome.failures().isEmpty(),
        () ->
            "exceptions escaped: "
                + outcome.failures().size()
                + ", first: "
                + outcome.failures().get(0));
    assertTrue(outcome.reads() > 0, "no read overlapped the writes");
    PrefixChainIndex reference = new PrefixChainIndex();
    for (List<Op> seq : sequences) {
      seq.forEach(op -> op.apply(reference));
    }
    assertTrue(reference.size() > 0, "the sequences leave blocks behind");
    assertEquals(reference.size(), index.size());
    assertEquals(new HashSet<>(reference.dump()), new HashSet<>(index.dump()));
    for (long[] q : queries(families)) {
      assertEquals(
          reference.findMatches(q).ranks(),
          index.findMatches(q).ranks(),
          () -> "query " + Arrays.toString(q));
    }
  }

  /**
   * Runs the writers (worker {@code w}'s sequence on writer {@code w % WRITERS}, sequences of one
   * writer interleaved op by op) against readers looping over {@code queries}; collects whatever
   * any thread throws.
   */
  static Outcome run(
      BlockIndex index, List<List<Op>> sequences, List<long[]> queries, int readerCount)
      throws InterruptedException {
    List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean writing = new AtomicBoolean(true);
    AtomicLong reads = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> writers = new ArrayList<>();
    for (int t = 0; t < WRITERS; t++) {
      List<List<Op>> mine = new ArrayList<>();
      for (int w = t; w < sequences.size(); w += WRITERS) {
        mine.add(sequences.get(w));
      }
      writers.add(
          thread(
              "stress-writer-" + t,
              failures,
              start,
              () -> {
                for (int i = 0; i < OPS_PER_WORKER; i++) {
                  for (List<Op> seq : mine) {
                    seq.get(i).apply(index);
                  }
                }
              }));
    }
    List<Thread> readers = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READ_DEADLINE_MS);
    for (int t = 0; t < readerCount; t++) {
      int offset = t;
      readers.add(
          thread(
              "stress-reader-" + t,
              failures,
              start,
              () -> {
                for (int i = 0; i < MAX_READS_PER_READER && failures.isEmpty(); i++) {
                  if (!writing.get() || System.nanoTime() > deadline) {
                    return;
                  }
                  long[] q = queries.get((i + offset) % queries.size());
                  OverlapScores s = index.findMatches(q);
                  int[] visited = {0};
                  s.forEach(
                      (rank, overlap) -> {
                        visited[0]++;
                        if (overlap.totalBlocks() > q.length) {
                          throw new AssertionError(
                              rank + " overlaps " + overlap + " of " + q.length);
                        }
                      });
                  if (visited[0] != s.size()) {
                    throw new AssertionError(
                        "visited " + visited[0] + " of " + s.size() + " scored ranks");
                  }
                  reads.incrementAndGet();
                }
              }));
    }
    writers.forEach(Thread::start);
    readers.forEach(Thread::start);
    start.countDown();
    for (Thread w : writers) {
      w.join(TimeUnit.SECONDS.toMillis(60));
    }
    writing.set(false);
    for (Thread r : readers) {
      r.join(TimeUnit.SECONDS.toMillis(60));
    }
    for (Thread t : writers) {
      assertTrue(!t.isAlive(), t.getName() + " did not finish");
    }
    return new Outcome(List.copyOf(failures), reads.get());
  }

  private static Thread thread(
      String name, List<Throwable> failures, CountDownLatch start, Runnable body) {
    Thread t =
        new Thread(
            () -> {
              try {
                start.await();
                body.run();
              } catch (Throwable e) {
                failures.add(e);
              }
            },
            name);
    t.setDaemon(true);
    return t;
  }

  /** Prompt families: long runs of local hashes that stores cut slices from and queries walk. */
  static long[][] families(long seed) {
    Random rnd = new Random(seed * 31 + 7);
    long[][] f = new long[FAMILIES][FAMILY_BLOCKS];
    for (long[] family : f) {
      for (int i = 0; i < family.length; i++) {
        family[i] = rnd.nextLong();
      }
    }
    return f;
  }

  /** Every family prefix of a few lengths, and a query that diverges after a few blocks. */
  static List<long[]> queries(long[][] families) {
    List<long[]> out = new ArrayList<>();
    for (long[] family : families) {
      for (int n : new int[] {1, 4, 16, FAMILY_BLOCKS}) {
        out.add(Arrays.copyOf(family, n));
      }
      long[] diverging = Arrays.copyOf(family, 12);
      diverging[6] ^= 1;
      out.add(diverging);
    }
    return out;
  }

  /**
   * One op sequence per worker, over that worker's ranks only. External hashes are a function of
   * (family, position), as an engine's chained hashes would be, so a store can name the parent it
   * extends; about a third of the stores extend a block the rank no longer holds and are rejected.
   */
  static List<List<Op>> sequences(long seed, long[][] families) {
    Random rnd = new Random(seed);
    List<List<Op>> out = new ArrayList<>();
    for (int w = 0; w < WORKERS; w++) {
      List<Op> ops = new ArrayList<>(OPS_PER_WORKER);
      for (int i = 0; i < OPS_PER_WORKER; i++) {
        WorkerRank rank = new WorkerRank(w, rnd.nextInt(RANKS_PER_WORKER));
        StorageTier tier = rnd.nextInt(8) == 0 ? StorageTier.HOST_PINNED : StorageTier.DEVICE;
        int f = rnd.nextInt(FAMILIES);
        int roll = rnd.nextInt(1000);
        if (roll < 600) {
          int from = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(FAMILY_BLOCKS - 1);
          int to = Math.min(FAMILY_BLOCKS, from + 1 + rnd.nextInt(12));
          long[] ext = new long[to - from];
          for (int p = from; p < to; p++) {
            ext[p - from] = external(f, p);
          }
          ops.add(
              new Store(
                  rank,
                  tier,
                  from > 0,
                  from > 0 ? external(f, from - 1) : 0,
                  ext,
                  Arrays.copyOfRange(families[f], from, to)));
        } else if (roll < 970) {
          int from = rnd.nextInt(FAMILY_BLOCKS);
          int n = 1 + rnd.nextInt(4);
          long[] ext = new long[Math.min(n, FAMILY_BLOCKS - from)];
          for (int p = 0; p < ext.length; p++) {
            ext[p] = external(f, from + p);
          }
          ops.add(new Remove(rank, tier, ext));
        } else if (roll < 990) {
          ops.add(new ResetRank(rank));
        } else {
          ops.add(new ClearWorker(w));
        }
      }
      out.add(ops);
    }
    return out;
  }

  private static long external(int family, int position) {
    return 0x5EED_0000_0000L + family * 1_000L + position;
  }
}
