package io.kvselect.tools.loadgen;

import io.kvselect.server.KvselectNode;
import io.kvselect.server.bus.BusAddresses;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.tools.Unreachable;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-queueload wakeup}: how long the node's event loops stay busy when capacity
 * returns to a partition whose router queue holds many parked requests. Starts a node in this JVM
 * (approximate mode, queueing on, one worker with a small batch), books one request so the worker
 * is busy, parks {@code --parked} {@code select_and_reserve} calls over the node's event-bus API,
 * then raises the worker's {@code max_num_batched_tokens} (the {@code PATCH /workers/1} of the
 * event-bus API) so every parked request can be served, and waits for every answer.
 *
 * <p>While it waits, a probe on each of the node's event loops runs a 1 ms periodic timer and
 * records how late each tick fires (HdrHistogram): a tick can only be late by as long as the task
 * that held its loop, so the maximum lateness bounds the longest event-loop task of the wake-up
 * (plus timer granularity). Prints a Markdown table with the command, machine and commit.
 *
 * <p>A harness, not a test: it asserts nothing; exit 0 after printing, 2 for a bad flag, 1 when
 * the set-up fails. It stops the node it starts. A mutable picocli target: one per run, on the
 * main thread.
 */
@Command(
    name = "kvselect-queueload wakeup",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    description = {
      "Parks N requests in a router queue, frees capacity, reports the event loops' longest stall."
    })
public final class QueueWakeUp implements Callable<Integer> {

  private static volatile String invocation = "kvselect-queueload wakeup";

  @Option(
      names = "--parked",
      paramLabel = "N",
      description = "Requests parked before the wake-up (10000).")
  int parked = 10_000;

  @Option(names = "--runs", paramLabel = "N", description = "Wake-ups, each on a fresh node (3).")
  int runs = 3;

  @Option(names = "--prompt-tokens", paramLabel = "N", description = "Token ids per prompt (32).")
  int promptTokens = 32;

  /** One wake-up. */
  record Run(
      int parked,
      long served,
      long failed,
      double parkSeconds,
      double wakeToLastMs,
      double lagMaxMs,
      double lagP99Ms,
      double lagP999Ms,
      long ticks) {}

  public static void main(String[] args) {
    invocation = "bin/kvselect-queueload wakeup " + String.join(" ", args);
    System.exit(new CommandLine(new QueueWakeUp()).execute(args));
  }

  @Override
  public Integer call() {
    if (parked < 1 || parked > 100_000 || runs < 1 || promptTokens < 1 || promptTokens > 100_000) {
      System.err.println(
          "kvselect-queueload wakeup: --parked within [1, 100000], --runs >= 1, "
              + "--prompt-tokens within [1, 100000]");
      return 2;
    }
    List<Run> done = new ArrayList<>();
    try {
      for (int i = 0; i < runs; i++) {
        done.add(measure());
      }
    } catch (Exception e) {
      System.err.println("kvselect-queueload wakeup: " + Unreachable.message(e));
      return 1;
    }
    report(System.out, done);
    return 0;
  }

  /** One wake-up on a fresh in-process node; stops the node before it returns. */
  Run measure() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host", "127.0.0.1", "--port", "0", "--router-queue-timeout-secs", "600"
            },
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "1.0"));
    KvselectNode node = await(KvselectNode.start(s, 1));
    try {
      Vertx vertx = node.vertx();
      DeliveryOptions slow = new DeliveryOptions().setSendTimeout(TimeUnit.MINUTES.toMillis(10));
      await(
          vertx
              .eventBus()
              .request(
                  BusAddresses.WORKERS_CREATE,
                  new JsonObject()
                      .put("worker_id", 1)
                      .put("endpoint", "http://w1")
                      .put("block_size", 16)
                      .put("max_num_batched_tokens", 16),
                  slow));
      await(vertx.eventBus().request(BusAddresses.SELECT_AND_RESERVE, prompt("first", 0), slow));
      AtomicLong served = new AtomicLong();
      AtomicLong failed = new AtomicLong();
      CompletableFuture<Void> all = new CompletableFuture<>();
      AtomicLong open = new AtomicLong(parked);
      long p0 = System.nanoTime();
      for (int i = 0; i < parked; i++) {
        vertx
            .eventBus()
            .request(BusAddresses.SELECT_AND_RESERVE, prompt("p" + i, 1_000 + i), slow)
            .onComplete(
                ar -> {
                  (ar.succeeded() ? served : failed).incrementAndGet();
                  if (open.decrementAndGet() == 0) {
                    all.complete(null);
                  }
                });
      }
      long bound = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
      while (pending(node) < parked) {
        if (System.nanoTime() > bound || failed.get() > 0) {
          throw new IllegalStateException(
              "only "
                  + pending(node)
                  + " of "
                  + parked
                  + " requests parked ("
                  + failed.get()
                  + " failed)");
        }
        Thread.sleep(20);
      }
      double parkSeconds = (System.nanoTime() - p0) / 1e9;
      Recorder lag = new Recorder(TimeUnit.SECONDS.toNanos(60), 3);
      List<String> probes = new ArrayList<>();
      int loops = 2 * Runtime.getRuntime().availableProcessors();
      for (int i = 0; i < loops; i++) {
        probes.add(await(vertx.deployVerticle(new LagProbe(lag))));
      }
      Thread.sleep(200);
      lag.getIntervalHistogram();
      long t0 = System.nanoTime();
      await(
          vertx
              .eventBus()
              .request(
                  BusAddresses.WORKERS_PATCH,
                  new JsonObject().put("worker_id", 1).put("max_num_batched_tokens", 1_000_000_000),
                  slow));
      all.get(5, TimeUnit.MINUTES);
      double wakeMs = (System.nanoTime() - t0) / 1e6;
      Thread.sleep(50);
      Histogram h = lag.getIntervalHistogram();
      for (String id : probes) {
        await(vertx.undeploy(id));
      }
      return new Run(
          parked,
          served.get(),
          failed.get(),
          parkSeconds,
          wakeMs,
          h.getMaxValue() / 1e6,
          h.getValueAtPercentile(99) / 1e6,
          h.getValueAtPercentile(99.9) / 1e6,
          h.getTotalCount());
    } finally {
      await(node.close());
    }
  }

  private JsonObject prompt(String id, int base) {
    JsonArray t = new JsonArray();
    for (int i = 0; i < promptTokens; i++) {
      t.add(base + i);
    }
    return new JsonObject().put("selection_id", id).put("token_ids", t);
  }

  private static long pending(KvselectNode node) {
    return node.service().inspection().loads(null, null).stream()
        .mapToLong(l -> l.pendingCount())
        .sum();
  }

  /** A 1 ms periodic timer on one event loop that records how late each tick fires. */
  static final class LagProbe extends VerticleBase {
    private final Recorder lag;
    private long timer;

    LagProbe(Recorder lag) {
      this.lag = lag;
    }

    @Override
    public Future<?> start() {
      long[] last = {System.nanoTime()};
      timer =
          vertx.setPeriodic(
              1,
              id -> {
                long now = System.nanoTime();
                lag.recordValue(
                    Math.min(TimeUnit.SECONDS.toNanos(60), Math.max(0, now - last[0] - 1_000_000)));
                last[0] = now;
              });
      return Future.succeededFuture();
    }

    @Override
    public Future<?> stop() {
      vertx.cancelTimer(timer);
      return Future.succeededFuture();
    }
  }

  static void report(PrintStream out, List<Run> runs) {
    out.println("## Router queue: waking " + runs.get(0).parked() + " parked requests");
    out.println();
    out.println(
        "Command: `"
            + invocation
            + "`; "
            + BenchEnv.cpus()
            + " CPUs ("
            + BenchEnv.cpuModel()
            + "), load "
            + String.format(Locale.ROOT, "%.2f", BenchEnv.loadAverage())
            + ", commit "
            + BenchEnv.gitCommit()
            + ".");
    out.println();
    out.println(
        "| run | parked | served | failed | parking s | wake to last answer ms | event-loop lag max ms "
            + "| lag p99 ms | lag p99.9 ms | ticks |");
    out.println("|---|---|---|---|---|---|---|---|---|---|");
    for (int i = 0; i < runs.size(); i++) {
      Run r = runs.get(i);
      out.printf(
          Locale.ROOT,
          "| %d | %d | %d | %d | %.2f | %.0f | %.1f | %.1f | %.1f | %d |%n",
          i + 1,
          r.parked(),
          r.served(),
          r.failed(),
          r.parkSeconds(),
          r.wakeToLastMs(),
          r.lagMaxMs(),
          r.lagP99Ms(),
          r.lagP999Ms(),
          r.ticks());
    }
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(2, TimeUnit.MINUTES);
  }
}
