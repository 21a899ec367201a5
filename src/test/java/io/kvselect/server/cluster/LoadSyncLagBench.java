package io.kvselect.server.cluster;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.service.PotentialLoad;
import io.kvselect.core.service.PromptInput;
import io.kvselect.core.service.SelectRequest;
import io.kvselect.core.service.SelectionService;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Load-sync lag: two clustered nodes in one JVM (loopback, default 5 s reconciliation interval, so
 * digests play no part); node A books a reservation and then frees it, and the harness spins on
 * node B's {@code /loads} view ({@code inspection().loads}, what the route renders) until the
 * booking shows up, then until it is gone. Prints p50/p90/p99/max of both lags. Not a test: run
 * its {@code main} (see docs/benchmarks.md for the command). Arguments: iterations (default 2000).
 */
public final class LoadSyncLagBench {

  private LoadSyncLagBench() {}

  private static long requests(SelectionService s) {
    for (var p : s.inspection().loads("lag", null)) {
      for (PotentialLoad l : p.loads()) {
        return l.activeRequests();
      }
    }
    return -1;
  }

  private static long waitFor(SelectionService s, long want, long startNanos) {
    long deadline = startNanos + TimeUnit.SECONDS.toNanos(30);
    while (requests(s) != want) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("node B never showed " + want + " request(s)");
      }
      Thread.onSpinWait();
    }
    return System.nanoTime() - startNanos;
  }

  public static void main(String[] args) throws Exception {
    int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int warmup = Math.max(100, iterations / 10);
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
    SyncTestNode.Cluster cluster = SyncTestNode.Cluster.random();
    var router = SyncTestNode.router("DYN_ROUTER_USE_KV_EVENTS", "false");
    try (SyncTestNode a = SyncTestNode.start(cluster, PeerSyncOptions.defaults(), router, false);
        SyncTestNode b = SyncTestNode.start(cluster, PeerSyncOptions.defaults(), router, false)) {
      a.service
          .upsertWorker(
              WorkerSpec.builder(1).modelName("lag").endpoint("http://w1").blockSize(16).build())
          .toCompletableFuture()
          .get(30, TimeUnit.SECONDS);
      waitFor(b.service, 0, System.nanoTime());
      Histogram booked = new Histogram(TimeUnit.SECONDS.toNanos(30), 3);
      Histogram freed = new Histogram(TimeUnit.SECONDS.toNanos(30), 3);
      int[] tokens = new int[256];
      for (int i = 0; i < warmup + iterations; i++) {
        for (int t = 0; t < tokens.length; t++) {
          tokens[t] = i * 1000 + t;
        }
        String id = "lag-" + i;
        SelectRequest req =
            SelectRequest.of(new PartitionKey("lag", null), PromptInput.tokens(tokens))
                .withSelectionId(id);
        long t0 = System.nanoTime();
        a.service.select(req, true).toCompletableFuture().get(30, TimeUnit.SECONDS);
        long up = waitFor(b.service, 1, t0);
        long t1 = System.nanoTime();
        a.service.free(id).toCompletableFuture().get(30, TimeUnit.SECONDS);
        long down = waitFor(b.service, 0, t1);
        if (i >= warmup) {
          booked.recordValue(up);
          freed.recordValue(down);
        }
      }
      System.out.printf(
          Locale.ROOT,
          "%-8s %8s %10s %10s %10s %10s%n",
          "step",
          "samples",
          "p50 us",
          "p90 us",
          "p99 us",
          "max us");
      for (var e :
          java.util.Map.of("booked", booked, "freed", freed).entrySet().stream()
              .sorted(java.util.Map.Entry.comparingByKey())
              .toList()) {
        Histogram h = e.getValue();
        System.out.printf(
            Locale.ROOT,
            "%-8s %8d %10.1f %10.1f %10.1f %10.1f%n",
            e.getKey(),
            h.getTotalCount(),
            h.getValueAtPercentile(50) / 1e3,
            h.getValueAtPercentile(90) / 1e3,
            h.getValueAtPercentile(99) / 1e3,
            h.getMaxValue() / 1e3);
      }
      System.out.println(
          "gaps on B: "
              + b.sync.stats().gaps.get()
              + ", digests applied on B: "
              + b.sync.stats().digestsApplied.get());
    }
  }
}
