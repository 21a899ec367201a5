package io.kvselect.bench;

import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.MatchBuffer;
import io.kvselect.core.index.MatchLevels;
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
 * CPU per lookup, as a Markdown table. Forms: {@code buffer} ({@link MatchBuffer}), {@code levels}
 * ({@link MatchLevels}), {@code levelsRead} (levels plus a visit of every scored rank). The forms
 * that use {@link MatchLevels} live in their own methods, so {@code buffer} alone also runs
 * against an index without it. Arguments: shards (1), forms (buffer,levels,levelsRead). Run with
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
    String[] forms = (args.length > 1 ? args[1] : "buffer,levels,levelsRead").split(",");
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
            case "buffer" -> buffer(index, qs);
            case "levels" -> levels(index, qs, false);
            case "levelsRead" -> levels(index, qs, true);
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

  private static long buffer(BlockIndex index, long[][] qs) {
    MatchBuffer b = new MatchBuffer();
    long n = 0;
    for (int r = 0; r < REPEAT; r++) {
      for (long[] q : qs) {
        index.findMatches(q, b);
        n += b.size();
      }
    }
    return n;
  }

  private static long levels(BlockIndex index, long[][] qs, boolean read) {
    MatchLevels l = new MatchLevels();
    long[] sum = {0};
    MatchLevels.Visitor v = (rank, d, h, dk, e) -> sum[0] += rank.dpRank() + d;
    long n = 0;
    for (int r = 0; r < REPEAT; r++) {
      for (long[] q : qs) {
        index.findMatchLevels(q, l);
        n += l.size();
        if (read) {
          l.forEach(v);
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
