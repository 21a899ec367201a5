package io.kvselect.bench;

import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.MatchBuffer;
import io.kvselect.core.index.MatchLevels;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * {@code findMatches} latency of {@link PrefixChainIndex} for a 64-block query over 1,000 ranks
 * (125 workers x 8 DP ranks), each holding 8 cached 64-block sequences whose first 32 blocks come
 * from 16 shared, skewed prefixes (about 512k indexed (rank, block) entries). Workloads, reported
 * separately:
 *
 * <ul>
 *   <li>{@code hit}: a sequence some rank stored in full; hundreds of ranks share its prefix;
 *   <li>{@code partial}: the first 32 blocks of a stored sequence, then unseen blocks;
 *   <li>{@code miss}: 64 unseen blocks.
 * </ul>
 *
 * <p>Entry points: {@code findMatches} returns an immutable {@link OverlapScores} (what the
 * service calls today); {@code findMatchesIntoBuffer} fills a per-thread {@link MatchBuffer} and
 * {@code findMatchLevels} a per-thread {@link MatchLevels}, both allocating nothing (check with
 * {@code -prof gc}: {@code gc.alloc.rate.norm}); the {@code *Read} variants also visit every
 * scored rank's name and device depth, as a consumer of the whole result does. {@code shards}: 1
 * benchmarks a plain {@link PrefixChainIndex}, N > 1 the node's {@link ShardedBlockIndex} of N
 * of them ({@code -p shards=1,2}).
 *
 * <p>Sample-time mode, so JMH prints p50/p99/p99.9 per workload. Run (after {@code mvn
 * test-compile} and {@code mvn dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * -Dmdep.includeScope=test}):
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/cp.txt) org.openjdk.jmh.Main \
 *     FindMatchesBenchmark -f 1 -wi 2 -w 1s -i 3 -r 1s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgs = {"-Xmx2g"})
public class FindMatchesBenchmark {

  private static final int QUERIES = 1024;

  @Param({"hit", "partial", "miss"})
  public String workload;

  @Param({"1000"})
  public int ranks;

  @Param({"1"})
  public int shards;

  private long[][] queries;
  private BlockIndex index;
  private int next;

  /** One reusable buffer and levels result per benchmark thread. */
  @State(Scope.Thread)
  public static class Buffer {
    final MatchBuffer buffer = new MatchBuffer();
    final MatchLevels levels = new MatchLevels();
    long sum;
    final MatchLevels.Visitor reader = (rank, d, h, dk, e) -> sum += rank.dpRank() + d;
  }

  @Setup(Level.Trial)
  public void setUp() {
    IndexWorkload w = new IndexWorkload(42, ranks, 64, 32, 16);
    index = shards == 1 ? new PrefixChainIndex()
        : new ShardedBlockIndex(shards, PrefixChainIndex::new);
    long[][] stored = w.populate(index, 8);
    queries = new long[QUERIES][];
    for (int i = 0; i < QUERIES; i++) {
      long[] s = stored[w.nextInt(ranks)];
      switch (workload) {
        case "hit":
          queries[i] = s;
          break;
        case "partial":
          queries[i] = w.divergeAfter(s, 32);
          break;
        case "miss":
          queries[i] = w.divergeAfter(s, 0);
          break;
        default:
          throw new IllegalArgumentException(workload);
      }
    }
  }

  @Benchmark
  public OverlapScores findMatches() {
    long[] q = queries[next];
    next = (next + 1) & (QUERIES - 1);
    return index.findMatches(q);
  }

  @Benchmark
  public MatchBuffer findMatchesIntoBuffer(Buffer b) {
    long[] q = queries[next];
    next = (next + 1) & (QUERIES - 1);
    index.findMatches(q, b.buffer);
    return b.buffer;
  }

  @Benchmark
  public MatchLevels findMatchLevels(Buffer b) {
    long[] q = queries[next];
    next = (next + 1) & (QUERIES - 1);
    index.findMatchLevels(q, b.levels);
    return b.levels;
  }

  /** {@link #findMatchLevels} plus a visit of every scored rank's name and device depth. */
  @Benchmark
  public long findMatchLevelsRead(Buffer b) {
    long[] q = queries[next];
    next = (next + 1) & (QUERIES - 1);
    index.findMatchLevels(q, b.levels);
    b.levels.forEach(b.reader);
    return b.sum;
  }

  /** {@link #findMatchesIntoBuffer} plus a visit of every scored rank's name and device depth. */
  @Benchmark
  public long findMatchesIntoBufferRead(Buffer b) {
    long[] q = queries[next];
    next = (next + 1) & (QUERIES - 1);
    MatchBuffer m = b.buffer;
    index.findMatches(q, m);
    long sum = 0;
    for (int i = 0, n = m.size(); i < n; i++) {
      sum += m.rank(i).dpRank() + m.device(i);
    }
    return sum;
  }
}
