package io.kvselect.bench;

import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Store throughput of {@link PrefixChainIndex} in blocks per second: each invocation stores one
 * 64-block sequence (32 shared-prefix blocks from 16 skewed prefixes + 32 unique blocks) for the
 * next of 1,000 ranks, into an index that starts empty every iteration and grows during it. The
 * score is ops/s where one op is one stored block. Hashes are precomputed, so this measures the
 * index, not hashing. Run like {@link FindMatchesBenchmark}:
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/cp.txt) org.openjdk.jmh.Main \
 *     StoreBenchmark -f 1 -wi 2 -w 1s -i 3 -r 1s
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgs = {"-Xmx2g"})
public class StoreBenchmark {

  private static final int BLOCKS = 64;
  private static final int SEQUENCES = 16384;
  private static final int RANKS = 1000;

  private long[][] locals;
  private long[][] externals;
  private WorkerRank[] ranks;
  private PrefixChainIndex index;
  private int next;

  @Setup(Level.Trial)
  public void generate() {
    IndexWorkload w = new IndexWorkload(7, RANKS, BLOCKS, 32, 16);
    locals = new long[SEQUENCES][];
    externals = new long[SEQUENCES][];
    for (int i = 0; i < SEQUENCES; i++) {
      locals[i] = w.sequence();
      externals[i] = BlockHasher.sequenceHashes(locals[i]);
    }
    ranks = new WorkerRank[RANKS];
    for (int r = 0; r < RANKS; r++) {
      ranks[r] = IndexWorkload.rank(r);
    }
  }

  @Setup(Level.Iteration)
  public void freshIndex() {
    index = new PrefixChainIndex();
    next = 0;
  }

  @Benchmark
  @OperationsPerInvocation(BLOCKS)
  public boolean store() {
    int i = next++;
    int s = i & (SEQUENCES - 1);
    return index.store(ranks[i % RANKS], StorageTier.DEVICE, false, 0L, externals[s], locals[s]);
  }
}
