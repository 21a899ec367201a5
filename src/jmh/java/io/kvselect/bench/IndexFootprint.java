package io.kvselect.bench;

import io.kvselect.core.index.PrefixChainIndex;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

/**
 * Approximate heap bytes per indexed (rank, block) entry of {@link PrefixChainIndex}: used heap
 * ({@link MemoryMXBean#getHeapMemoryUsage()}, minimum over repeated {@code System.gc()}) with the
 * populated index reachable, minus the same before populating, divided by
 * {@link PrefixChainIndex#size()}. The workload's own arrays are dropped before measuring. Prints
 * one table row per workload. External hashes are the public sequence hashes (as the mocker and
 * the TTL indexes use) except in the row marked opaque. Under G1 (the default) large arrays occupy
 * whole regions, so the figure includes that slack; run also with {@code -XX:+UseParallelGC} for
 * the bytes the index itself retains. Arguments: {@code small} (the rows up to 1.4 M entries,
 * the default), {@code 10m} (the rows at about 10 million entries: 10.4 M and 10.0 M) or {@code all}. Run with
 *
 * <pre>
 * java -Xmx4g -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *     io.kvselect.bench.IndexFootprint 10m
 * </pre>
 */
public final class IndexFootprint {

  private IndexFootprint() {}

  public static void main(String[] args) {
    String which = args.length == 0 ? "small" : args[0];
    System.out.println("| workload | ranks | entries | nodes | bytes/entry |");
    System.out.println("|---|---|---|---|---|");
    if (which.equals("small") || which.equals("all")) {
      measure("shared prefix (32 of 64 blocks, 16 prefixes), 8 seq/rank", 1000, 32, 16, 8, false);
      measure("shared prefix (32 of 64 blocks, 16 prefixes), 32 seq/rank", 1000, 32, 16, 32, false);
      measure("no sharing (64 unique blocks), 8 seq/rank", 1000, 0, 1, 8, false);
      measure("shared prefix, 8 seq/rank, opaque external hashes", 1000, 32, 16, 8, true);
    }
    if (which.equals("10m") || which.equals("all")) {
      measure("shared prefix (32 of 64 blocks, 16 prefixes), 310 seq/rank", 1000, 32, 16, 310,
          false);
      measure("no sharing (64 unique blocks), 157 seq/rank", 1000, 0, 1, 157, false);
    }
  }

  private static void measure(String name, int ranks, int shared, int prefixes, int perRank,
      boolean opaqueExternals) {
    long before = usedAfterGc();
    PrefixChainIndex index = new PrefixChainIndex();
    new IndexWorkload(42, ranks, 64, shared, prefixes).populate(index, perRank, opaqueExternals);
    long after = usedAfterGc();
    System.out.printf("| %s | %d | %d | %d | %.1f |%n", name, ranks, index.size(),
        index.nodeCount(), (after - before) / (double) index.size());
  }

  private static long usedAfterGc() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
    }
    return used;
  }
}
