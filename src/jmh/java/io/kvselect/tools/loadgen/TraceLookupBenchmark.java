package io.kvselect.tools.loadgen;

import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
 * The lookups of a Mooncake trace replay ({@link ReplayWorkload}, precomputed hashes) against the
 * index the replay ends with: every store and removal of the trace applied, then the trace's
 * lookups cycled in order on one thread. Isolates the lookup forms of {@code bin/kvselect-bench
 * replay} from the replay's scheduling and its event threads. With every store applied, a lookup
 * scores more ranks than during the replay (every worker that served a request holds block 0).
 *
 * <p>Forms: {@code scores} ({@code findMatches} returning {@link OverlapScores}, the node's
 * call); {@code scoresRead} also visits every scored rank's name and device depth, as a consumer
 * of the whole result does.
 *
 * <p>The trace is given by {@code -p trace=FILE} (required). Run (after {@code mvn test-compile}
 * and the class path of {@code docs/benchmarks.md}):
 *
 * <pre>
 * java -cp $CP org.openjdk.jmh.Main TraceLookupBenchmark -p trace=conversation_trace.jsonl \
 *     -p workers=7000 -f 1 -wi 2 -w 1s -i 3 -r 1s -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgs = {"-Xmx2g"})
public class TraceLookupBenchmark {

  @Param({""})
  public String trace;

  @Param({"7000"})
  public int workers;

  @Param({"2"})
  public int shards;

  private ShardedBlockIndex index;
  private long[][] queries;
  private int next;

  /** Per-thread read accumulator. */
  @State(Scope.Thread)
  public static class Results {
    long sum;
  }

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    if (trace.isEmpty()) {
      throw new IllegalArgumentException("-p trace=FILE is required");
    }
    ReplayWorkload w = ReplayWorkload.build(MooncakeTrace.read(Path.of(trace)), workers, 1,
        16_384, 512, 42, shards, ReplayWorkload.Apply.INDEX);
    index = new ShardedBlockIndex(shards, PrefixChainIndex::new);
    List<long[]> lookups = new ArrayList<>();
    for (ReplayWorkload.Timeline t : w.timelines) {
      for (int i = 0; i < t.ops.length; i++) {
        Object op = t.ops[i];
        if (op instanceof ReplayWorkload.Lookup l) {
          lookups.add(l.localHashes());
        } else if (op instanceof ReplayWorkload.Store st) {
          index.store(t.ranks[i], StorageTier.DEVICE, st.hasParent(), st.parentHash(),
              st.externalHashes(), st.localHashes());
        } else if (op instanceof ReplayWorkload.Remove rm) {
          index.remove(t.ranks[i], StorageTier.DEVICE, rm.externalHashes());
        }
      }
    }
    queries = lookups.toArray(new long[0][]);
  }

  private long[] nextQuery() {
    long[] q = queries[next];
    next = next + 1 == queries.length ? 0 : next + 1;
    return q;
  }

  @Benchmark
  public OverlapScores scores() {
    return index.findMatches(nextQuery());
  }

  @Benchmark
  public long scoresRead(Results r) {
    index.findMatches(nextQuery()).forEach((rank, o) -> r.sum += rank.dpRank() + o.device());
    return r.sum;
  }
}
