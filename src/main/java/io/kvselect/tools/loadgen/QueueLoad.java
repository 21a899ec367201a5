// Over 400 lines: a benchmark tool's command, run loop and Markdown report (the sending is
// QueueLoadSender).
package io.kvselect.tools.loadgen;

import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.tools.Unreachable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-queueload}: the router queue on an overloaded fleet. Starts a kvselect node
 * in this JVM (approximate mode, queueing on) or targets one ({@code --url}), registers simulated
 * workers, sends {@code /select_and_reserve} open loop at {@code --rate} for {@code --duration}
 * seconds, plays each booked request's engine ({@link QueueLoadSender}), samples {@code /loads}
 * every 100 ms and prints a Markdown report: outcomes (200, 429 by {@code limit_kind}, other),
 * latency percentiles, pending counts and the node's {@code kvselect_router_queue_wait} counts.
 *
 * <p>A harness, not a test: it asserts nothing; exit 0 after printing, 2 for a bad flag, 1 when
 * the set-up fails. Every thread it starts is stopped before it returns. A mutable picocli target:
 * one per run, on the main thread.
 */
@Command(
    name = "kvselect-queueload",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    description = {
      "Open-loop /select_and_reserve load on simulated workers, with the router queue on."
    })
public final class QueueLoad implements Callable<Integer> {

  private static final Pattern OUTCOME = Pattern.compile("outcome=\"([^\"]*)\"");

  /** The command line as typed, for the report; set once by {@link #main}. */
  private static volatile String invocation = "kvselect-queueload";

  @Option(
      names = "--url",
      paramLabel = "URL",
      description = "Target this node instead of starting one (its own queue settings apply).")
  String url;

  @Option(
      names = "--threshold",
      paramLabel = "T",
      description = "In-process node: DYN_ROUTER_QUEUE_THRESHOLD (1.0).")
  double threshold = 1.0;

  @Option(
      names = "--queue-timeout-secs",
      paramLabel = "S",
      description = "In-process node: router queue timeout (5).")
  double queueTimeoutSecs = 5;

  @Option(names = "--workers", paramLabel = "N", description = "Simulated workers to register (4).")
  int workers = 4;

  @Option(
      names = "--batch-tokens",
      paramLabel = "N",
      description = "Their max_num_batched_tokens (2048).")
  int batchTokens = 2048;

  @Option(
      names = "--register",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description = "Register the workers (on); --no-register uses the target's own workers.")
  boolean register = true;

  @Option(names = "--rate", paramLabel = "R", description = "Offered requests per second (100).")
  double rate = 100;

  @Option(names = "--duration", paramLabel = "S", description = "Seconds of sending (20).")
  double duration = 20;

  @Option(names = "--isl", paramLabel = "N", description = "Prompt tokens (2048).")
  int isl = 2048;

  @Option(
      names = "--shared-prefix",
      paramLabel = "F",
      description =
          "Fraction of each prompt taken from one of --prefix-groups shared prefixes (0.5).")
  double sharedPrefix = 0.5;

  @Option(
      names = "--prefix-groups",
      paramLabel = "N",
      description = "Distinct shared prefixes (8).")
  int prefixGroups = 8;

  @Option(
      names = "--pool",
      paramLabel = "N",
      description =
          "Pre-encoded bodies; request i sends body i mod N (0 = one per request, at most 8192).")
  int pool = 0;

  @Option(
      names = "--prefill-tokens-per-sec",
      paramLabel = "R",
      description = "Prefill speed of each simulated worker, one request after another (20000).")
  double prefillTokensPerSec = 20_000;

  @Option(
      names = "--decode-ms",
      paramLabel = "MS",
      description = "Decode time before the reservation is freed (200).")
  long decodeMs = 200;

  @Option(
      names = "--event-loops",
      paramLabel = "N",
      description = "Load-generator event loops, one sender each (2).")
  int eventLoops = 2;

  @Option(
      names = "--connections",
      paramLabel = "N",
      description = "HTTP/1.1 connections per sender; a parked request holds one (2048).")
  int connections = 2048;

  @Option(names = "--seed", paramLabel = "N", description = "Workload seed (1).")
  long seed = 1;

  /** Block size of the registered workers. */
  static final int BLOCK_SIZE = 16;

  /** Router-queue wait counts of one outcome over the run, from {@code /metrics}. */
  record QueueWait(long count, double seconds) {}

  /** A finished run. */
  record Result(
      long sent,
      double sendSeconds,
      QueueLoadStats stats,
      long pendingMax,
      double pendingMean,
      int pendingSamples,
      Map<String, QueueWait> queueWaits,
      long unfinished,
      Map<String, Integer> unfinishedBySteps,
      String target,
      long prefixTokens,
      long meanBodyBytes) {}

  public static void main(String[] args) {
    invocation = "bin/kvselect-queueload " + String.join(" ", args);
    System.exit(new CommandLine(new QueueLoad()).execute(args));
  }

  @Override
  public Integer call() {
    try {
      validate();
    } catch (IllegalArgumentException e) {
      System.err.println("kvselect-queueload: " + e.getMessage());
      return 2;
    }
    Result r;
    try {
      r = measure();
    } catch (Exception e) {
      System.err.println("kvselect-queueload: " + Unreachable.message(e));
      return 1;
    }
    report(System.out, r);
    return 0;
  }

  void validate() {
    if (!(rate > 0)
        || !(duration > 0)
        || workers < 1
        || batchTokens < 1
        || isl < 1
        || !(threshold >= 0)
        || !(queueTimeoutSecs > 0)
        || !(sharedPrefix >= 0 && sharedPrefix <= 1)
        || prefixGroups < 1
        || pool < 0
        || !(prefillTokensPerSec > 0)
        || decodeMs < 0
        || eventLoops < 1
        || connections < 1) {
      throw new IllegalArgumentException(
          "--rate, --duration, --queue-timeout-secs and --prefill-tokens-per-sec "
              + "must be > 0; --workers, --batch-tokens, --isl, --prefix-groups, --event-loops and "
              + "--connections >= 1; --pool, --threshold and --decode-ms >= 0; --shared-prefix within [0, 1]");
    }
    if (rate * duration > 10_000_000) {
      throw new IllegalArgumentException("--rate x --duration must be at most 10,000,000 requests");
    }
    if (url != null) {
      URI u = URI.create(url);
      if (u.getHost() == null || u.getPort() < 0) {
        throw new IllegalArgumentException("--url must look like http://HOST:PORT, got " + url);
      }
    }
  }

  /** Bodies to pre-encode: {@code --pool}, or one per request up to 8192. */
  int bodies() {
    return pool > 0 ? pool : (int) Math.min(8192, Math.max(1, Math.round(rate * duration)));
  }

  /** Runs the load and returns what it measured; stops everything it started. */
  Result measure() throws Exception {
    validate();
    QueueLoadWorkload work =
        QueueLoadWorkload.encode(seed, bodies(), isl, sharedPrefix, prefixGroups, BLOCK_SIZE);
    KvselectNode node = null;
    Vertx vertx = null;
    try {
      String host;
      int port;
      if (url == null) {
        node = startNode();
        host = "127.0.0.1";
        port = node.port();
      } else {
        URI u = URI.create(url);
        host = u.getHost();
        port = u.getPort();
      }
      vertx = Vertx.builder().with(new VertxOptions().setEventLoopPoolSize(eventLoops)).build();
      HttpClient admin = vertx.createHttpClient();
      String target = "http://" + host + ":" + port;
      if (register) {
        for (int w = 1; w <= workers; w++) {
          JsonObject spec =
              new JsonObject()
                  .put("worker_id", w)
                  .put("endpoint", "http://sim-worker-" + w + ":8000")
                  .put("block_size", BLOCK_SIZE)
                  .put("max_num_batched_tokens", batchTokens);
          int status =
              await(
                      callNode(
                          admin, target, host, port, HttpMethod.POST, "/workers", spec.toBuffer()))
                  .status();
          if (status != 200 && status != 201) {
            throw new IllegalStateException("POST " + target + "/workers answered " + status);
          }
        }
      }
      Map<String, QueueWait> before =
          queueWaits(
              await(callNode(admin, target, host, port, HttpMethod.GET, "/metrics", null)).body());

      long total = Math.round(rate * duration);
      int senders = eventLoops;
      long requestTimeoutMs = (long) ((url == null ? queueTimeoutSecs : 300) * 1000) + 30_000;
      QueueLoadSender.Shared shared = new QueueLoadSender.Shared();
      PendingSampler sampler = new PendingSampler(host, port);
      await(vertx.deployVerticle(sampler));
      long t0 = System.nanoTime() + 200_000_000L;
      QueueLoadSender.Plan plan =
          new QueueLoadSender.Plan(
              host,
              port,
              senders,
              total,
              rate,
              t0,
              prefillTokensPerSec,
              decodeMs,
              requestTimeoutMs,
              connections,
              work,
              shared);
      List<QueueLoadSender> list = new ArrayList<>();
      for (int k = 0; k < senders; k++) {
        QueueLoadSender s = new QueueLoadSender(k, plan);
        await(vertx.deployVerticle(s));
        list.add(s);
      }
      long end = t0 + (long) ((total - 1) / rate * 1e9);
      sleepUntil(end);
      long[] pending = await(sampler.window());
      // an in-process node answers a parked request within its queue timeout, and a booked one is
      // freed a prefill and a decode later: 10 s over that is a request that will not finish (the
      // report and the test name the step it stopped in), not a slow one. Another node may be
      // configured with any queue timeout: its requests get the whole request timeout.
      long drainMs = url == null ? (long) (queueTimeoutSecs * 1000) + 10_000 : requestTimeoutMs;
      long drainDeadline =
          System.nanoTime()
              + TimeUnit.MILLISECONDS.toNanos(drainMs + decodeMs)
              + (long) (4L * isl / prefillTokensPerSec * 1e9);
      while (shared.open.get() > 0 && System.nanoTime() < drainDeadline) {
        Thread.sleep(10);
      }
      QueueLoadStats all = new QueueLoadStats();
      for (QueueLoadSender s : list) {
        all.add(await(s.stats()));
      }
      Map<String, QueueWait> after =
          queueWaits(
              await(callNode(admin, target, host, port, HttpMethod.GET, "/metrics", null)).body());
      Map<String, QueueWait> waits = new TreeMap<>();
      after.forEach(
          (k, a) -> {
            QueueWait b = before.getOrDefault(k, new QueueWait(0, 0));
            waits.put(k, new QueueWait(a.count() - b.count(), a.seconds() - b.seconds()));
          });
      return new Result(
          all.sent,
          (end - t0) / 1e9 + 1 / rate,
          all,
          pending[0],
          pending[2] == 0 ? 0 : (double) pending[1] / pending[2],
          (int) pending[2],
          waits,
          shared.open.get(),
          shared.unfinishedBySteps(),
          url == null ? "in-process on 127.0.0.1:" + port : url,
          work.prefixTokens(),
          work.meanBodyBytes());
    } finally {
      if (vertx != null) {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      if (node != null) {
        node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    }
  }

  private KvselectNode startNode() throws Exception {
    Map<String, String> env =
        Map.of(
            "DYN_ROUTER_USE_KV_EVENTS",
            "false",
            "DYN_ROUTER_QUEUE_THRESHOLD",
            Double.toString(threshold),
            "DYN_ROUTER_QUEUE_TIMEOUT_SECS",
            Double.toString(queueTimeoutSecs));
    NodeSettings s;
    try {
      s = NodeSettings.parse(new String[] {"--host", "127.0.0.1", "--port", "0"}, env);
    } catch (CliException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    return KvselectNode.start(s)
        .toCompletionStage()
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS);
  }

  /** An HTTP answer: status and body. */
  record Answer(int status, Buffer body) {}

  static Future<Answer> call(
      HttpClient client, String host, int port, HttpMethod method, String uri, Buffer body) {
    RequestOptions ro =
        new RequestOptions()
            .setMethod(method)
            .setHost(host)
            .setPort(port)
            .setURI(uri)
            .setIdleTimeout(30_000);
    if (body != null) {
      ro.putHeader("content-type", "application/json");
    }
    return client
        .request(ro)
        .compose(req -> body == null ? req.send() : req.send(body))
        .compose(resp -> resp.body().map(b -> new Answer(resp.statusCode(), b)));
  }

  /** {@link #call}, its connection failure reported as {@link Unreachable} naming {@code target + uri}. */
  private static Future<Answer> callNode(
      HttpClient client,
      String target,
      String host,
      int port,
      HttpMethod method,
      String uri,
      Buffer body) {
    return call(client, host, port, method, uri, body)
        .recover(e -> Future.failedFuture(new Unreachable("kvselect", target + uri, e)));
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static void sleepUntil(long nanos) throws InterruptedException {
    long left;
    while ((left = nanos - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(Math.min(left, 100_000_000L));
    }
  }

  /** Sums {@code kvselect_router_queue_wait_seconds_{count,sum}} per outcome over every series. */
  static Map<String, QueueWait> queueWaits(Buffer metrics) {
    Map<String, long[]> counts = new TreeMap<>();
    Map<String, double[]> sums = new TreeMap<>();
    for (String line : metrics.toString().split("\n")) {
      boolean count = line.startsWith("kvselect_router_queue_wait_seconds_count{");
      boolean sum = line.startsWith("kvselect_router_queue_wait_seconds_sum{");
      if (!count && !sum) {
        continue;
      }
      Matcher m = OUTCOME.matcher(line);
      if (!m.find()) {
        continue;
      }
      double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      if (count) {
        counts.computeIfAbsent(m.group(1), k -> new long[1])[0] += Math.round(v);
      } else {
        sums.computeIfAbsent(m.group(1), k -> new double[1])[0] += v;
      }
    }
    Map<String, QueueWait> out = new TreeMap<>();
    counts.forEach(
        (k, c) -> out.put(k, new QueueWait(c[0], sums.getOrDefault(k, new double[1])[0])));
    return out;
  }

  /** Prints the Markdown report of {@code r}. */
  void report(PrintStream out, Result r) {
    QueueLoadStats s = r.stats();
    out.printf("### kvselect-queueload at %s req/s%n%n", fmt(rate));
    out.printf("- command: `%s`%n", invocation);
    out.printf("- commit: %s%n", BenchEnv.gitCommit());
    out.printf(
        "- machine: %d CPUs (nproc), %s; load average %.2f at the end%n",
        BenchEnv.cpus(), BenchEnv.cpuModel(), BenchEnv.loadAverage());
    out.printf("- java: %s%n", BenchEnv.javaVersion());
    out.printf(
        "- node: %s%s%n",
        r.target(),
        url == null
            ? String.format(
                Locale.ROOT,
                ", approximate mode "
                    + "(DYN_ROUTER_USE_KV_EVENTS=false), DYN_ROUTER_QUEUE_THRESHOLD=%s, queue timeout %s s",
                threshold,
                fmt(queueTimeoutSecs))
            : " (its own queue settings)");
    out.printf(
        "- fleet: %s; each prefills %s tokens/s, one request after another, then decodes %d ms%n",
        register
            ? workers
                + " simulated workers, max_num_batched_tokens "
                + batchTokens
                + ", block size "
                + BLOCK_SIZE
            : "the target's workers",
        fmt(prefillTokensPerSec),
        decodeMs);
    out.printf(
        "- prompts: %d tokens (%d shared with one of %d prefixes), %d pre-encoded bodies of about %d bytes%s%n",
        isl,
        r.prefixTokens(),
        prefixGroups,
        bodies(),
        r.meanBodyBytes(),
        bodies() < r.sent()
            ? " (request i sends body i mod " + bodies() + ": a repeated body may be cached whole)"
            : ", one per request");
    if (register) {
      out.printf(
          "- prefill capacity: about %s req/s with no cached prefix, %s req/s with every shared prefix cached%n",
          fmt(workers * prefillTokensPerSec / isl),
          fmt(workers * prefillTokensPerSec / Math.max(1, isl - r.prefixTokens())));
    }
    out.printf(
        "- load: open loop, %s req/s for %s s (%d requests, %d event loops), latency from each request's "
            + "intended send time; largest send lag %.1f ms; requests unfinished at the end: %d%s%n%n",
        fmt(rate),
        fmt(r.sendSeconds()),
        r.sent(),
        eventLoops,
        s.maxSendLagMicros / 1e3,
        r.unfinished(),
        r.unfinished() == 0 ? "" : " (by the step they stopped in: " + r.unfinishedBySteps() + ")");
    out.println("| outcome | requests | share of sent | p50 ms | p99 ms | max ms |");
    out.println("|---|---|---|---|---|---|");
    row(out, "200 served", s.served, r.sent());
    for (String kind : List.of("timeout", "requests", "isl_tokens")) {
      Histogram h = s.rejectedByKind.get(kind);
      row(out, "429 `" + kind + "`", h == null ? new Histogram(1) : h, r.sent());
    }
    s.rejectedByKind.forEach(
        (kind, h) -> {
          if (!List.of("timeout", "requests", "isl_tokens").contains(kind)) {
            row(out, "429 `" + kind + "`", h, r.sent());
          }
        });
    row(out, "all 429", s.rejected, r.sent());
    out.printf(
        Locale.ROOT,
        "| other | %d | %.1f%% | | | |%n%n",
        s.otherCount(),
        pct(s.otherCount(), r.sent()));
    if (!s.other.isEmpty()) {
      out.printf("Other outcomes: %s%n%n", s.other);
    }
    if (s.prefillCompleteErrors + s.freeErrors > 0) {
      out.printf(
          "Engine calls that failed: %d prefill_complete, %d free%n%n",
          s.prefillCompleteErrors, s.freeErrors);
    }
    out.printf("| `/loads` pending_count (every 100 ms while sending) | max | mean | samples |%n");
    out.println("|---|---|---|---|");
    out.printf(
        "| all partitions | %d | %.1f | %d |%n%n",
        r.pendingMax(), r.pendingMean(), r.pendingSamples());
    out.println(
        "| `kvselect_router_queue_wait` outcome (node, over the run) | count | mean wait ms |");
    out.println("|---|---|---|");
    if (r.queueWaits().isEmpty()) {
      out.println("| (no request waited) | 0 | |");
    }
    r.queueWaits()
        .forEach(
            (k, w) ->
                out.printf(
                    Locale.ROOT,
                    "| %s | %d | %s |%n",
                    k,
                    w.count(),
                    w.count() == 0
                        ? ""
                        : String.format(Locale.ROOT, "%.1f", w.seconds() * 1e3 / w.count())));
    out.println();
  }

  private static void row(PrintStream out, String what, Histogram h, long sent) {
    long n = h.getTotalCount();
    if (n == 0) {
      out.printf("| %s | 0 | 0%% | | | |%n", what);
      return;
    }
    out.printf(
        Locale.ROOT,
        "| %s | %d | %.1f%% | %.1f | %.1f | %.1f |%n",
        what,
        n,
        pct(n, sent),
        h.getValueAtPercentile(50) / 1e3,
        h.getValueAtPercentile(99) / 1e3,
        h.getMaxValue() / 1e3);
  }

  private static double pct(long n, long of) {
    return of == 0 ? 0 : 100.0 * n / of;
  }

  private static String fmt(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15
        ? String.format(Locale.ROOT, "%,d", (long) v)
        : String.format(Locale.ROOT, "%,.2f", v);
  }

  /**
   * Polls {@code GET /loads} every 100 ms and keeps the largest and the running sum of the summed
   * {@code pending_count} of every partition until {@link #window()}; a poll is skipped while the
   * previous one is still open. Its fields are confined to its event loop.
   */
  static final class PendingSampler extends VerticleBase {
    private final String host;
    private final int port;
    private HttpClient client;
    private long timer = -1;
    private boolean busy;
    private long max;
    private long sum;
    private long samples;

    PendingSampler(String host, int port) {
      this.host = host;
      this.port = port;
    }

    @Override
    public Future<?> start() {
      client = vertx.createHttpClient();
      timer = vertx.setPeriodic(100, id -> poll());
      return Future.succeededFuture();
    }

    @Override
    public Future<?> stop() {
      if (timer >= 0) {
        vertx.cancelTimer(timer);
      }
      return client.close();
    }

    private void poll() {
      if (busy || timer < 0) {
        return;
      }
      busy = true;
      call(client, host, port, HttpMethod.GET, "/loads", null)
          .onComplete(
              ar -> {
                busy = false;
                if (timer < 0 || ar.failed() || ar.result().status() != 200) {
                  return;
                }
                long pending = 0;
                JsonArray parts = new JsonArray(ar.result().body());
                for (int i = 0; i < parts.size(); i++) {
                  pending += parts.getJsonObject(i).getLong("pending_count", 0L);
                }
                max = Math.max(max, pending);
                sum += pending;
                samples++;
              });
    }

    /** Stops sampling; {@code [max, sum, samples]}. */
    Future<long[]> window() {
      Promise<long[]> p = Promise.promise();
      context.runOnContext(
          v -> {
            if (timer >= 0) {
              vertx.cancelTimer(timer);
              timer = -1;
            }
            p.complete(new long[] {max, sum, samples});
          });
      return p.future();
    }
  }
}
