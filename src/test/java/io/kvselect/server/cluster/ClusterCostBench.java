package io.kvselect.server.cluster;

import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Two cluster figures over HTTP, through the real start path ({@link KvselectNode#start}), in one
 * JVM on loopback, approximate mode, two workers, session affinity on:
 *
 * <ol>
 *   <li><b>Binding visible on another node</b>: a two-node cluster; a new session's first
 *       {@code /select_and_reserve} is sent to A, then {@code /select} with the session to B until
 *       B answers A's worker. Recorded: from sending the booking to the first matching answer of
 *       B (so it includes A's booking and B's select), and how many selects B needed. The booking
 *       is freed after each sample (not timed).
 *   <li><b>Cost of clustering on one node</b>: {@code /select_and_reserve} (sessions taken in turn
 *       from 1,000 per round, so most bookings find their session bound) followed by {@code DELETE /reservations/{id}}, by {@code threads} client threads
 *       for {@code seconds}, against a standalone node and against node A of a two-node cluster
 *       (B is idle apart from sync and Hazelcast backups), alternating, twice each; pairs per
 *       second.
 * </ol>
 *
 * Not a test: run its {@code main} (see docs/benchmarks.md). Arguments: binding samples (default
 * 2000), seconds per throughput round (default 10), client threads (default 8).
 */
public final class ClusterCostBench {

  /** Sessions each throughput round cycles through (a bound table: bindings live for the idle TTL). */
  private static final int SESSIONS = 1000;

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private ClusterCostBench() {}

  private static HttpResponse<String> call(KvselectNode n, String method, String path, String body)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.port() + path))
            .timeout(Duration.ofSeconds(30));
    if (body == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("content-type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body));
    }
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() / 100 != 2) {
      throw new IllegalStateException(
          method + " " + path + " -> " + r.statusCode() + " " + r.body());
    }
    return r;
  }

  private static long worker(HttpResponse<String> r) throws Exception {
    return ClusterHarness.JSON.readTree(r.body()).path("worker_id").asLong();
  }

  private static String prompt(String session, String id, int seed) {
    StringBuilder t = new StringBuilder();
    for (int i = 0; i < 64; i++) {
      t.append(i == 0 ? "" : ",").append(seed * 100 + i);
    }
    return "{\"session_id\":\""
        + session
        + "\""
        + (id == null ? "" : ",\"selection_id\":\"" + id + "\"")
        + ",\"token_ids\":["
        + t
        + "]}";
  }

  private static void register(KvselectNode n) throws Exception {
    for (int w = 1; w <= 2; w++) {
      call(
          n,
          "POST",
          "/workers",
          "{\"worker_id\":" + w + ",\"endpoint\":\"http://w" + w + ":8000\",\"block_size\":16}");
    }
  }

  private static void awaitWorkers(KvselectNode n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (n.service().listWorkers(null, null).size() < 2) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("workers never reached the node on " + n.port());
      }
      Thread.sleep(20);
    }
  }

  /** Pairs of select_and_reserve + DELETE per second against {@code n}. */
  private static double throughput(KvselectNode n, String label, int seconds, int threads)
      throws Exception {
    AtomicLong done = new AtomicLong();
    AtomicLong seq = new AtomicLong();
    long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    long end = warmEnd + TimeUnit.SECONDS.toNanos(seconds);
    List<Thread> ts = new ArrayList<>();
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread th =
          new Thread(
              () -> {
                try {
                  while (System.nanoTime() < end) {
                    long i = seq.incrementAndGet();
                    String id = label + "-" + i;
                    call(
                        n,
                        "POST",
                        "/select_and_reserve",
                        prompt(label + "-s" + (i % SESSIONS), id, (int) (i % 1000)));
                    call(n, "DELETE", "/reservations/" + id, null);
                    if (System.nanoTime() > warmEnd) {
                      done.incrementAndGet();
                    }
                  }
                } catch (Throwable e) {
                  errors.add(e);
                }
              });
      th.start();
      ts.add(th);
    }
    for (Thread th : ts) {
      th.join();
    }
    if (!errors.isEmpty()) {
      throw new IllegalStateException(errors.get(0));
    }
    return done.get() / (double) seconds;
  }

  public static void main(String[] args) throws Exception {
    int samples = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int threads = args.length > 2 ? Integer.parseInt(args[2]) : 8;
    try (ClusterHarness h = new ClusterHarness()) {
      KvselectNode a = h.start();
      KvselectNode b = h.start();
      register(a);
      awaitWorkers(b);

      Histogram visible = new Histogram(TimeUnit.SECONDS.toNanos(30), 3);
      Histogram selects = new Histogram(1000, 2);
      int warmup = Math.max(100, samples / 10);
      for (int i = 0; i < warmup + samples; i++) {
        String session = "vis-" + i;
        long t0 = System.nanoTime();
        long bound = worker(call(a, "POST", "/select_and_reserve", prompt(session, "vis-" + i, i)));
        int tries = 0;
        long got;
        do {
          tries++;
          got = worker(call(b, "POST", "/select", prompt(session, null, i + 7)));
        } while (got != bound && tries < 1000);
        long lag = System.nanoTime() - t0;
        if (got != bound) {
          throw new IllegalStateException(session + " never showed on B");
        }
        call(a, "DELETE", "/reservations/vis-" + i, null);
        if (i >= warmup) {
          visible.recordValue(lag);
          selects.recordValue(tries);
        }
      }
      System.out.printf(
          Locale.ROOT,
          "binding visible on B: samples %d, p50 %.0f us, p90 %.0f us, p99 %.0f us,"
              + " max %.0f us; selects on B per sample: max %d%n",
          visible.getTotalCount(),
          visible.getValueAtPercentile(50) / 1e3,
          visible.getValueAtPercentile(90) / 1e3,
          visible.getValueAtPercentile(99) / 1e3,
          visible.getMaxValue() / 1e3,
          selects.getMaxValue());

      NodeSettings plain =
          NodeSettings.parse(
              new String[] {
                "--host", "127.0.0.1", "--port", "0", "--session-affinity-ttl-secs", "600"
              },
              ClusterHarness.ENV);
      KvselectNode standalone =
          KvselectNode.start(plain)
              .toCompletionStage()
              .toCompletableFuture()
              .get(60, TimeUnit.SECONDS);
      try {
        register(standalone);
        for (int round = 1; round <= 2; round++) {
          double s = throughput(standalone, "plain" + round, seconds, threads);
          double c = throughput(a, "clustered" + round, seconds, threads);
          System.out.printf(
              Locale.ROOT,
              "round %d: standalone %.0f pairs/s, clustered (A of 2) %.0f pairs/s,"
                  + " ratio %.2f; load average %.2f%n",
              round,
              s,
              c,
              c / s,
              java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                  .getSystemLoadAverage());
        }
      } finally {
        standalone.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      }
    }
  }
}
