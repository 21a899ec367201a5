package io.kvselect.bench;

import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
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
 * service calls); {@code findMatchesReadEach} also reads the overlap of every rank of the index
 * by name, as the service's {@code Selector} reads each candidate's. {@code shards}: 1
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
  /** Every rank of the index, in rank order: the candidates a selection reads one by one. */
  private WorkerRank[] all;
  private int next;

  @Setup(Level.Trial)
  public void setUp() {
    IndexWorkload w = new IndexWorkload(42, ranks, 64, 32, 16);
    index = shards == 1 ? new PrefixChainIndex()
        : new ShardedBlockIndex(shards, PrefixChainIndex::new);
    long[][] stored = w.populate(index, 8);
    all = index.dump().stream().map(StoredBlock::rank).distinct().sorted(
        java.util.Comparator.comparingLong(WorkerRank::workerId).thenComparingInt(WorkerRank::dpRank))
        .toArray(WorkerRank[]::new);
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

  /**
   * {@link #findMatches} plus the overlap of every rank of the index read by name
   * ({@code of(rank)}), as the service's {@code Selector} reads each candidate's overlap.
   */
  @Benchmark
  public long findMatchesReadEach() {
    long[] q = queries[next];
    next = (next + 1) & (QUERIES - 1);
    OverlapScores o = index.findMatches(q);
    long sum = 0;
    for (WorkerRank r : all) {
      sum += o.of(r).device();
    }
    return sum;
  }
}
