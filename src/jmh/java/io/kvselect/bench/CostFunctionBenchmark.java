package io.kvselect.bench;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.select.Candidate;
import io.kvselect.core.select.CostFunction;
import io.kvselect.core.select.CostRequest;
import io.kvselect.core.select.Picker;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Per-request cost of scoring and picking over 8, 128 and 1000 candidate ranks.
 *
 * <p>Candidates are seeded: a third have a device prefix hit (some with host/disk extensions), a
 * tenth have no load row, loads are uniform random. {@code logits} scores into a reused array;
 * {@code logitsAndPickGreedy} adds the T=0 picker; {@code logitsAndPickSoftmax} adds the T=0.5
 * softmax picker; {@code logitsWithDecay} turns on the credit decay (a second pass for the
 * minimum).
 *
 * <p>Run from the repository root:
 *
 * <pre>
 * mvn -q dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
 * mvn -q test-compile
 * java -cp target/test-classes:target/classes:$(cat target/cp.txt) org.openjdk.jmh.Main \
 *     CostFunction -f 1 -wi 2 -w 1s -i 3 -r 1s
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CostFunctionBenchmark {

  @Param({"8", "128", "1000"})
  public int candidates;

  private final RouterConfig config = RouterConfig.DEFAULTS;
  private RouterConfig decayConfig;
  private final CostRequest request = new CostRequest(16, 2048, true, false);
  private List<Candidate> cands;
  private double[] out;
  private SplittableRandom rng;

  @Setup
  public void setup() {
    SplittableRandom seed = new SplittableRandom(20240611L);
    cands = new ArrayList<>(candidates);
    for (int i = 0; i < candidates; i++) {
      RankOverlap overlap = RankOverlap.NONE;
      if (seed.nextInt(3) == 0) {
        int device = 1 + seed.nextInt(128);
        overlap = new RankOverlap(device, seed.nextInt(4) == 0 ? seed.nextInt(16) : 0,
            seed.nextInt(8) == 0 ? seed.nextInt(16) : 0, 0);
      }
      WorkerRank rank = new WorkerRank(i / 4, i % 4);
      if (seed.nextInt(10) == 0) {
        cands.add(Candidate.unloaded(rank, overlap));
      } else {
        cands.add(new Candidate(rank, overlap, true, seed.nextLong(0, 65536),
            seed.nextLong(0, 4096), seed.nextInt(64), 0.0));
      }
    }
    out = new double[candidates];
    rng = new SplittableRandom(7);
    decayConfig = config.toBuilder().overlapScoreCreditDecay(1.0).build();
  }

  @Benchmark
  public double[] logits() {
    CostFunction.logits(config, request, cands, out);
    return out;
  }

  @Benchmark
  public double[] logitsWithDecay() {
    CostFunction.logits(decayConfig, request, cands, out);
    return out;
  }

  @Benchmark
  public int logitsAndPickGreedy() {
    CostFunction.logits(config, request, cands, out);
    return Picker.pick(out, candidates, 0.0, rng);
  }

  @Benchmark
  public int logitsAndPickSoftmax() {
    CostFunction.logits(config, request, cands, out);
    return Picker.pick(out, candidates, 0.5, rng);
  }
}
