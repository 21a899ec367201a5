package io.kvselect.tools.loadgen;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One open-loop sender of {@link QueueLoad}, deployed once per load-generator event loop. Sender
 * {@code k} of {@code n} sends requests {@code k, k + n, k + 2n, ...}; request {@code i} is due at
 * {@code t0 + i / rate} and is sent at the first 1 ms tick at or after that time, however many
 * requests are still open. A booked request then plays its engine: it waits for its turn in the
 * chosen worker's prefill (each worker prefills one request after another at
 * {@code prefillTokensPerSec}), posts {@code prefill_complete}, decodes for {@code decodeMs} and
 * frees the reservation.
 *
 * <p>Ownership: every field except {@link Shared} is confined to this verticle's event loop (the
 * tick timer and every HTTP callback run there, since the requests are made from it).
 */
final class QueueLoadSender extends VerticleBase {

  /**
   * State every sender shares: the simulated engines (per worker, the time its prefill queue
   * drains, updated by compare-and-set) and the requests not finished yet (sent, and if booked
   * not yet freed), each with the step it is in, so that a run that cannot drain says where its
   * requests stopped. Thread-safe.
   */
  static final class Shared {
    final ConcurrentMap<Long, AtomicLong> prefillFreeAt = new ConcurrentHashMap<>();
    final AtomicLong open = new AtomicLong();
    private final ConcurrentMap<Long, String> steps = new ConcurrentHashMap<>();

    void begin(long request) {
      open.incrementAndGet();
      steps.put(request, "select");
    }

    void step(long request, String step) {
      steps.put(request, step);
    }

    void end(long request) {
      steps.remove(request);
      open.decrementAndGet();
    }

    /** The requests not finished, counted by the step they are in (select, prefill, prefill_complete, decode, free). */
    java.util.Map<String, Integer> unfinishedBySteps() {
      java.util.Map<String, Integer> out = new java.util.TreeMap<>();
      steps.values().forEach(st -> out.merge(st, 1, Integer::sum));
      return out;
    }

    /** Queues {@code nanos} of prefill on {@code worker}; returns when that prefill ends. */
    long book(long worker, long now, long nanos) {
      return prefillFreeAt
          .computeIfAbsent(worker, w -> new AtomicLong())
          .accumulateAndGet(nanos, (free, d) -> Math.max(free, now) + d);
    }
  }

  /** What every sender is told; immutable. */
  record Plan(
      String host,
      int port,
      int senders,
      long total,
      double rate,
      long t0Nanos,
      double prefillTokensPerSec,
      long decodeMs,
      long requestTimeoutMs,
      int connections,
      QueueLoadWorkload workload,
      Shared shared) {}

  private final int index;
  private final Plan plan;
  private final QueueLoadStats stats = new QueueLoadStats();
  private HttpClient selects;
  private HttpClient control;
  private long next;
  private long timer = -1;

  QueueLoadSender(int index, Plan plan) {
    this.index = index;
    this.plan = plan;
    this.next = index;
  }

  @Override
  public Future<?> start() {
    // parked selections hold their connection, so the pool must cover the whole queue; engine
    // calls get their own pool and never wait behind a parked selection
    selects =
        vertx.createHttpClient(
            new HttpClientOptions().setKeepAlive(true),
            new PoolOptions().setHttp1MaxSize(plan.connections()));
    control =
        vertx.createHttpClient(
            new HttpClientOptions().setKeepAlive(true), new PoolOptions().setHttp1MaxSize(64));
    timer = vertx.setPeriodic(1, id -> tick());
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return Future.join(selects.close(), control.close());
  }

  /** This sender's statistics, handed over through its event loop once it has finished. */
  Future<QueueLoadStats> stats() {
    Promise<QueueLoadStats> p = Promise.promise();
    context.runOnContext(v -> p.complete(stats));
    return p.future();
  }

  private void tick() {
    long now = System.nanoTime();
    while (next < plan.total()) {
      long due = plan.t0Nanos() + (long) (next * 1e9 / plan.rate());
      if (due > now) {
        return;
      }
      stats.maxSendLagMicros = Math.max(stats.maxSendLagMicros, (now - due) / 1_000);
      send(next, due);
      next += plan.senders();
    }
    vertx.cancelTimer(timer);
    timer = -1;
  }

  private void send(long i, long due) {
    stats.sent++;
    plan.shared().begin(i);
    RequestOptions ro =
        options(HttpMethod.POST, "/select_and_reserve")
            .putHeader("content-type", "application/json");
    selects
        .request(ro)
        .compose(req -> req.send(plan.workload().body(i)))
        .compose(resp -> resp.body().map(b -> new Reply(resp, b)))
        .onComplete(
            ar -> {
              long micros = (System.nanoTime() - due) / 1_000;
              if (ar.failed()) {
                stats.other("error: " + ar.cause().getClass().getSimpleName());
                plan.shared().end(i);
                return;
              }
              Reply r = ar.result();
              if (r.status == 200) {
                stats.servedMicros(micros);
                engine(i, r.body);
              } else {
                if (r.status == 429) {
                  stats.rejectedMicros(limitKind(r.body), micros);
                } else {
                  stats.other("HTTP " + r.status);
                }
                plan.shared().end(i);
              }
            });
  }

  private record Reply(int status, Buffer body) {
    Reply(HttpClientResponse resp, Buffer body) {
      this(resp.statusCode(), body);
    }
  }

  private static String limitKind(Buffer body) {
    try {
      JsonObject d = new JsonObject(body).getJsonObject("details");
      String kind = d == null ? null : d.getString("limit_kind");
      return kind == null ? "none" : kind;
    } catch (RuntimeException e) {
      return "none";
    }
  }

  /** Plays the engine of a booked request: queued prefill, prefill_complete, decode, free. */
  private void engine(long i, Buffer body) {
    Shared shared = plan.shared();
    String id;
    long worker;
    long tokens;
    try {
      JsonObject s = new JsonObject(body);
      id = s.getString("selection_id");
      worker = s.getLong("worker_id");
      tokens = s.getLong("effective_prefill_tokens", 0L);
    } catch (RuntimeException e) {
      stats.other("unreadable 200: " + e.getClass().getSimpleName());
      shared.end(i);
      return;
    }
    long now = System.nanoTime();
    long end = shared.book(worker, now, (long) (tokens * 1e9 / plan.prefillTokensPerSec()));
    shared.step(i, "prefill");
    vertx.setTimer(
        Math.max(1, (end - now) / 1_000_000),
        t -> {
          shared.step(i, "prefill_complete");
          call(HttpMethod.POST, "/reservations/" + id + "/prefill_complete")
              .onComplete(
                  pc -> {
                    if (pc.failed() || pc.result() != 200) {
                      stats.prefillCompleteErrors++;
                    }
                    shared.step(i, "decode");
                    vertx.setTimer(
                        Math.max(1, plan.decodeMs()),
                        d -> {
                          shared.step(i, "free");
                          call(HttpMethod.DELETE, "/reservations/" + id)
                              .onComplete(
                                  fr -> {
                                    if (fr.failed() || fr.result() != 200) {
                                      stats.freeErrors++;
                                    }
                                    shared.end(i);
                                  });
                        });
                  });
        });
  }

  private Future<Integer> call(HttpMethod method, String uri) {
    return control
        .request(options(method, uri))
        .compose(req -> req.send())
        .compose(resp -> resp.body().map(b -> resp.statusCode()));
  }

  private RequestOptions options(HttpMethod method, String uri) {
    return new RequestOptions()
        .setMethod(method)
        .setHost(plan.host())
        .setPort(plan.port())
        .setURI(uri)
        .setIdleTimeout(plan.requestTimeoutMs());
  }
}
