package io.kvselect.bench;

import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Instant;
import java.util.Locale;

/**
 * The workloads of {@link FindMatchesBenchmark} (1,000 ranks, 64-block queries; hit, partial,
 * miss) timed in CPU time of the querying thread instead of wall time: on a machine shared with
 * other builds, a thread that is descheduled is not charged, so the figure follows the lookup's
 * own cost (cache effects of the neighbours remain). Per form and workload: 30 rounds of 50 x
 * 1,024 lookups, the first 5 discarded; prints the median and the best round, in microseconds of
 * CPU per lookup, as a Markdown table. Forms: {@code scores} ({@code findMatches} returning
 * {@code OverlapScores}, the node's call), {@code scoresRead} (plus a visit of every scored rank).
 * Arguments: shards (1), forms (scores,scoresRead). Run with
 *
 * <pre>
 * java -cp target/test-classes:target/classes:$(cat target/cp.txt) io.kvselect.bench.FindMatchesCpu 1
 * </pre>
 */
public final class FindMatchesCpu {

  private static final int ROUNDS = 30;
  private static final int WARM = 5;
  private static final int REPEAT = 50;

  private FindMatchesCpu() {}

  public static void main(String[] args) {
    int shards = args.length > 0 ? Integer.parseInt(args[0]) : 1;
    String[] forms = (args.length > 1 ? args[1] : "scores,scoresRead").split(",");
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    System.out.printf("## FindMatchesCpu%n%n- command: `FindMatchesCpu %s`%n- date: %s; %d CPUs; "
            + "java %s; load average %s%n%n", String.join(" ", args), Instant.now(),
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
        loadAverage());
    System.out.println("| form | shards | workload | CPU us/lookup, median round | best round "
        + "| ranks scored per lookup |");
    System.out.println("|---|---|---|---|---|---|");
    for (String workload : new String[] {"hit", "partial", "miss"}) {
      IndexWorkload w = new IndexWorkload(42, 1000, 64, 32, 16);
      BlockIndex index = shards == 1 ? new PrefixChainIndex()
          : new ShardedBlockIndex(shards, PrefixChainIndex::new);
      long[][] stored = w.populate(index, 8);
      long[][] qs = new long[1024][];
      for (int i = 0; i < qs.length; i++) {
        long[] s = stored[w.nextInt(1000)];
        qs[i] = workload.equals("hit") ? s
            : w.divergeAfter(s, workload.equals("partial") ? 32 : 0);
      }
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
            us[round - WARM] = (c1 - c0) / 1e3 / ((double) REPEAT * qs.length);
            scored = n;
          }
        }
        java.util.Arrays.sort(us);
        System.out.printf(Locale.ROOT, "| %s | %d | %s | %.3f | %.3f | %.0f |%n", form, shards,
            workload, us[us.length / 2], us[0], scored / ((double) REPEAT * qs.length));
      }
    }
  }

  private static long scores(BlockIndex index, long[][] qs, boolean read) {
    long[] sum = {0};
    long n = 0;
    for (int r = 0; r < REPEAT; r++) {
      for (long[] q : qs) {
        io.kvselect.core.index.OverlapScores o = index.findMatches(q);
        n += o.size();
        if (read) {
          o.forEach((rank, overlap) -> sum[0] += rank.dpRank() + overlap.device());
        }
      }
    }
    return sum[0] == -1 ? 0 : n;
  }

  private static String loadAverage() {
    return String.format(Locale.ROOT, "%.2f",
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }
}
