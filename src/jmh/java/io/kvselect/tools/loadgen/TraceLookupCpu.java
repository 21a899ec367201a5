package io.kvselect.tools.loadgen;

import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A Mooncake trace's stores and lookups ({@link ReplayWorkload}, precomputed hashes, 2 shards)
 * timed in CPU time of one thread, so that the cost of each operation can be read on a machine
 * shared with other builds (a descheduled thread is not charged). First the trace's store events
 * are applied to a fresh index, three times (the last is reported: CPU per store event and per
 * block); then the trace's lookups run against the index holding every store, once per round and
 * form (8 rounds, the first 2 discarded; median and best round). With every store applied, a
 * lookup scores more ranks than during the replay. Forms: {@code scores} ({@code findMatches}
 * returning {@code OverlapScores}, the node's call) and {@code scoresRead} (also visits every
 * scored rank's name and device depth). Arguments: trace file, workers, forms. Run with
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *     io.kvselect.tools.loadgen.TraceLookupCpu conversation_trace.jsonl 7000
 * </pre>
 */
public final class TraceLookupCpu {

  private static final int ROUNDS = 8;
  private static final int WARM = 2;

  private TraceLookupCpu() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args[0]);
    int workers = Integer.parseInt(args[1]);
    String[] forms = (args.length > 2 ? args[2] : "scores,scoresRead")
        .split(",");
    ReplayWorkload w = ReplayWorkload.build(MooncakeTrace.read(file), workers, 1, 16_384, 512, 42,
        2, ReplayWorkload.Apply.INDEX);
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    System.out.printf("## TraceLookupCpu%n%n- command: `TraceLookupCpu %s %d %s`%n- date: %s; "
            + "commit %s; %d CPUs; java %s; load average %.2f at start%n%n",
        file.getFileName(), workers, String.join(",", forms), Instant.now(), BenchEnv.gitCommit(),
        BenchEnv.cpus(), System.getProperty("java.version"), BenchEnv.loadAverage());
    ShardedBlockIndex index = null;
    List<long[]> lookups = new ArrayList<>();
    double perEvent = 0;
    double perBlock = 0;
    for (int pass = 0; pass < 3; pass++) {
      index = new ShardedBlockIndex(2, PrefixChainIndex::new);
      lookups.clear();
      long events = 0;
      long blocks = 0;
      long cpu = 0;
      for (ReplayWorkload.Timeline t : w.timelines) {
        for (int i = 0; i < t.ops.length; i++) {
          if (t.ops[i] instanceof ReplayWorkload.Lookup l) {
            lookups.add(l.localHashes());
          } else if (t.ops[i] instanceof ReplayWorkload.Store st) {
            long c0 = mx.getCurrentThreadCpuTime();
            index.store(t.ranks[i], StorageTier.DEVICE, st.hasParent(), st.parentHash(),
                st.externalHashes(), st.localHashes());
            cpu += mx.getCurrentThreadCpuTime() - c0;
            events++;
            blocks += st.localHashes().length;
          }
        }
      }
      perEvent = cpu / 1e3 / events;
      perBlock = cpu / (double) blocks;
    }
    System.out.printf(Locale.ROOT, "stores (third pass, includes reading the thread's CPU clock "
        + "per event): %.2f us CPU per store event, %.0f ns per stored block%n%n", perEvent,
        perBlock);
    long[][] qs = lookups.toArray(new long[0][]);
    System.out.println("| form | CPU us/lookup, median round | best round | ranks scored per lookup |");
    System.out.println("|---|---|---|---|");
    for (String form : forms) {
      double[] us = new double[ROUNDS - WARM];
      long scored = 0;
      for (int round = 0; round < ROUNDS; round++) {
        long c0 = mx.getCurrentThreadCpuTime();
        long n = switch (form) {
          case "scores" -> scores(index, qs, false);
          case "scoresRead" -> scores(index, qs, true);
          default -> throw new IllegalArgumentException(form);
        };
        long c1 = mx.getCurrentThreadCpuTime();
        if (round >= WARM) {
          us[round - WARM] = (c1 - c0) / 1e3 / qs.length;
          scored = n;
        }
      }
      Arrays.sort(us);
      System.out.printf(Locale.ROOT, "| %s | %.2f | %.2f | %.0f |%n", form, us[us.length / 2],
          us[0], scored / (double) qs.length);
    }
  }

  private static long scores(BlockIndex index, long[][] qs, boolean read) {
    long[] sum = {0};
    long n = 0;
    for (long[] q : qs) {
      io.kvselect.core.index.OverlapScores o = index.findMatches(q);
      n += o.size();
      if (read) {
        o.forEach((rank, overlap) -> sum[0] += rank.dpRank() + overlap.device());
      }
    }
    return sum[0] == -1 ? 0 : n;
  }
}
