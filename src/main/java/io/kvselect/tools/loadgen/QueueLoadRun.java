package io.kvselect.tools.loadgen;

import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.tools.Unreachable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One run of {@link QueueLoad}'s load: starts the in-process node (or targets {@code --url}),
 * registers the simulated workers, deploys the {@link QueueLoadSender}s and the
 * {@link PendingSampler}, sends for {@code --duration}, waits for the requests still open to
 * drain, and reads the node's {@code kvselect_router_queue_wait} counts from {@code /metrics}
 * before and after. Everything it starts is stopped before {@link #measure} returns. Holds only
 * the options it reads; one per run, on the caller's thread.
 */
final class QueueLoadRun {

  private static final Pattern OUTCOME = Pattern.compile("outcome=\"([^\"]*)\"");

  private final QueueLoad o;

  QueueLoadRun(QueueLoad o) {
    this.o = o;
  }

  /** Runs the load and returns what it measured; stops everything it started. */
  QueueLoad.Result measure() throws Exception {
    o.validate();
    QueueLoadWorkload work =
        QueueLoadWorkload.encode(
            o.seed, o.bodies(), o.isl, o.sharedPrefix, o.prefixGroups, QueueLoad.BLOCK_SIZE);
    KvselectNode node = null;
    Vertx vertx = null;
    try {
      String host;
      int port;
      if (o.url == null) {
        node = startNode();
        host = "127.0.0.1";
        port = node.port();
      } else {
        URI u = URI.create(o.url);
        host = u.getHost();
        port = u.getPort();
      }
      vertx = Vertx.builder().with(new VertxOptions().setEventLoopPoolSize(o.eventLoops)).build();
      HttpClient admin = vertx.createHttpClient();
      String target = "http://" + host + ":" + port;
      if (o.register) {
        for (int w = 1; w <= o.workers; w++) {
          JsonObject spec =
              new JsonObject()
                  .put("worker_id", w)
                  .put("endpoint", "http://sim-worker-" + w + ":8000")
                  .put("block_size", QueueLoad.BLOCK_SIZE)
                  .put("max_num_batched_tokens", o.batchTokens);
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
      Map<String, QueueLoad.QueueWait> before =
          queueWaits(
              await(callNode(admin, target, host, port, HttpMethod.GET, "/metrics", null)).body());

      long total = Math.round(o.rate * o.duration);
      int senders = o.eventLoops;
      long requestTimeoutMs = (long) ((o.url == null ? o.queueTimeoutSecs : 300) * 1000) + 30_000;
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
              o.rate,
              t0,
              o.prefillTokensPerSec,
              o.decodeMs,
              requestTimeoutMs,
              o.connections,
              work,
              shared);
      List<QueueLoadSender> list = new ArrayList<>();
      for (int k = 0; k < senders; k++) {
        QueueLoadSender s = new QueueLoadSender(k, plan);
        await(vertx.deployVerticle(s));
        list.add(s);
      }
      long end = t0 + (long) ((total - 1) / o.rate * 1e9);
      sleepUntil(end);
      long[] pending = await(sampler.window());
      // an in-process node answers a parked request within its queue timeout, and a booked one is
      // freed a prefill and a decode later: 10 s over that is a request that will not finish (the
      // report and the test name the step it stopped in), not a slow one. Another node may be
      // configured with any queue timeout: its requests get the whole request timeout.
      long drainMs = o.url == null ? (long) (o.queueTimeoutSecs * 1000) + 10_000 : requestTimeoutMs;
      long drainDeadline =
          System.nanoTime()
              + TimeUnit.MILLISECONDS.toNanos(drainMs + o.decodeMs)
              + (long) (4L * o.isl / o.prefillTokensPerSec * 1e9);
      while (shared.open.get() > 0 && System.nanoTime() < drainDeadline) {
        Thread.sleep(10);
      }
      QueueLoadStats all = new QueueLoadStats();
      for (QueueLoadSender s : list) {
        all.add(await(s.stats()));
      }
      Map<String, QueueLoad.QueueWait> after =
          queueWaits(
              await(callNode(admin, target, host, port, HttpMethod.GET, "/metrics", null)).body());
      Map<String, QueueLoad.QueueWait> waits = new TreeMap<>();
      after.forEach(
          (k, a) -> {
            QueueLoad.QueueWait b = before.getOrDefault(k, new QueueLoad.QueueWait(0, 0));
            waits.put(k, new QueueLoad.QueueWait(a.count() - b.count(), a.seconds() - b.seconds()));
          });
      return new QueueLoad.Result(
          all.sent,
          (end - t0) / 1e9 + 1 / o.rate,
          all,
          pending[0],
          pending[2] == 0 ? 0 : (double) pending[1] / pending[2],
          (int) pending[2],
          waits,
          shared.open.get(),
          shared.unfinishedBySteps(),
          o.url == null ? "in-process on 127.0.0.1:" + port : o.url,
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
            Double.toString(o.threshold),
            "DYN_ROUTER_QUEUE_TIMEOUT_SECS",
            Double.toString(o.queueTimeoutSecs));
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
  static Map<String, QueueLoad.QueueWait> queueWaits(Buffer metrics) {
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
    Map<String, QueueLoad.QueueWait> out = new TreeMap<>();
    counts.forEach(
        (k, c) ->
            out.put(k, new QueueLoad.QueueWait(c[0], sums.getOrDefault(k, new double[1])[0])));
    return out;
  }
}
