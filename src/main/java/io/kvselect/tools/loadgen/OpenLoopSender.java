package io.kvselect.tools.loadgen;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.internal.ContextInternal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One event loop of {@link OpenLoopGenerator}. Sender {@code k} of {@code n} owns requests
 * {@code k, k + n, k + 2n, ...} and {@code connections} keep-alive HTTP/1.1 connections
 * (pipelining off, so one request per connection at a time).
 *
 * <p>Open loop: request {@code i} is due at {@code t0 + i / rate}. The generator's pacer thread
 * wakes this sender when one of its requests falls due ({@link #wake()}); the sender then takes up
 * every request due by now. A request taken up goes out at once when a connection is free and
 * otherwise waits in this sender's queue, which holds no objects: it is the index range
 * {@code [nextSend, nextDue)}. Its latency is measured from its intended instant, so the time it
 * spent behind a late generator or waiting for a connection is part of it. Answers to
 * {@code /select_and_reserve} queue a {@code DELETE} of their reservation, sent before the next
 * request on the next free connection.
 *
 * <p>Closed loop: every connection sends its next request when its previous answer has arrived,
 * until the end of the window; latency is measured from the send.
 *
 * <p>Ownership: {@code context} and {@code vertx} are set once by {@link #start}, before the
 * pacer thread starts; every other field except {@link #wakePending} is confined to the event
 * loop of that context (the generator makes one context per event loop; the wake handler, every
 * HTTP callback and {@link #stats()} run there). {@link #wakePending} is set by the pacer thread
 * and cleared by the event loop.
 */
final class OpenLoopSender {

  /** The schedule every sender shares; immutable. */
  record Plan(
      OpenLoopOptions.Mode mode,
      String host,
      int port,
      String path,
      int senders,
      long total,
      double nanosPerRequest,
      long t0,
      long windowStart,
      long windowEnd,
      List<Buffer> bodies,
      boolean delete,
      long requestTimeoutMs) {

    long due(long i) {
      return t0 + (long) (i * nanosPerRequest);
    }

    boolean inWindow(long nanos) {
      return nanos >= windowStart && nanos < windowEnd;
    }
  }

  private static final byte[] SELECTION_ID =
      "\"selection_id\":\"".getBytes(StandardCharsets.US_ASCII);

  final AtomicBoolean wakePending = new AtomicBoolean();

  private final int index;
  private final int connections;
  private final Plan plan;
  private final OpenLoopStats stats = new OpenLoopStats();
  private final ArrayDeque<String> deletes = new ArrayDeque<>();
  private final Promise<Void> finished = Promise.promise();
  private volatile String thread;
  private ContextInternal context;
  private Vertx vertx;
  private HttpClient client;
  private RequestOptions post;
  private Handler<Void> wakeHandler;
  private long nextDue;
  private long nextSend;
  private int inFlight;
  private boolean closedLoopEnded;

  OpenLoopSender(int index, int connections, Plan plan) {
    this.index = index;
    this.connections = connections;
    this.plan = plan;
    this.nextDue = index;
    this.nextSend = index;
  }

  /** Creates the HTTP client on {@code context}, whose event loop this sender then owns. */
  Future<Void> start(ContextInternal context) {
    this.context = context;
    this.vertx = context.owner();
    Promise<Void> started = Promise.promise();
    context.runOnContext(
        v -> {
          this.thread = Thread.currentThread().getName();
          begin();
          started.complete();
        });
    return started.future();
  }

  private void begin() {
    client =
        vertx.createHttpClient(
            new HttpClientOptions()
                .setKeepAlive(true)
                .setPipelining(false)
                .setConnectTimeout(5_000),
            new PoolOptions().setHttp1MaxSize(connections));
    post =
        new RequestOptions()
            .setMethod(HttpMethod.POST)
            .setHost(plan.host())
            .setPort(plan.port())
            .setURI(plan.path())
            .setIdleTimeout(plan.requestTimeoutMs())
            .putHeader("content-type", "application/json");
    wakeHandler = v -> wake();
    if (plan.mode() == OpenLoopOptions.Mode.CLOSED) {
      long delay = Math.max(1, (plan.t0() - System.nanoTime()) / 1_000_000);
      vertx.setTimer(delay, t -> pump());
    }
  }

  /** The thread this sender runs on, once started. */
  String thread() {
    return thread;
  }

  /** Called by the pacer thread once one of this sender's requests is due. */
  void signal() {
    if (!wakePending.getAndSet(true)) {
      context.runOnContext(wakeHandler);
    }
  }

  /** Completes once every request of the schedule is answered or failed, and every DELETE too. */
  Future<Void> finished() {
    return finished.future();
  }

  /** A copy of this sender's statistics, made on its event loop. */
  Future<OpenLoopStats> stats() {
    Promise<OpenLoopStats> p = Promise.promise();
    context.runOnContext(v -> p.complete(stats.copy()));
    return p.future();
  }

  private void wake() {
    wakePending.set(false);
    long now = System.nanoTime();
    while (nextDue < plan.total()) {
      long due = plan.due(nextDue);
      if (due > now) {
        break;
      }
      if (plan.inWindow(due)) {
        stats.dispatched++;
        stats.lag.recordValue(OpenLoopStats.clamp((now - due) / 1_000));
      }
      nextDue += plan.senders();
    }
    pump();
    long queued = (nextDue - nextSend) / plan.senders();
    stats.maxQueued = Math.max(stats.maxQueued, queued);
  }

  private void pump() {
    while (inFlight < connections) {
      if (!deletes.isEmpty()) {
        delete(deletes.poll());
      } else if (plan.mode() == OpenLoopOptions.Mode.OPEN && nextSend < nextDue) {
        send(nextSend, plan.due(nextSend));
        nextSend += plan.senders();
      } else if (plan.mode() == OpenLoopOptions.Mode.CLOSED && !closedLoopEnded) {
        long now = System.nanoTime();
        if (now >= plan.windowEnd()) {
          closedLoopEnded = true;
          break;
        }
        if (plan.inWindow(now)) {
          stats.dispatched++;
        }
        send(nextSend, now);
        nextSend += plan.senders();
      } else {
        break;
      }
    }
    checkFinished();
  }

  private void checkFinished() {
    boolean scheduleDone =
        plan.mode() == OpenLoopOptions.Mode.OPEN ? nextSend >= plan.total() : closedLoopEnded;
    if (scheduleDone && inFlight == 0 && deletes.isEmpty()) {
      finished.tryComplete();
    }
  }

  private void send(long i, long intended) {
    inFlight++;
    stats.calls++;
    long sentAt = System.nanoTime();
    Buffer body = plan.bodies().get((int) (i % plan.bodies().size()));
    client
        .request(post)
        .compose(req -> req.send(body))
        .compose(
            resp ->
                resp.body()
                    .map(b -> resp.statusCode() == 200 && plan.delete() ? selectionId(b) : null)
                    .map(
                        id -> {
                          if (id != null) {
                            deletes.add(id);
                          } else if (plan.delete() && resp.statusCode() == 200) {
                            stats.deleteErrors++;
                          }
                          return resp.statusCode();
                        }))
        .onComplete(
            ar -> {
              inFlight--;
              long end = System.nanoTime();
              if (plan.inWindow(end)) {
                stats.completedInWindow++;
              }
              if (plan.inWindow(intended)) {
                stats.completed++;
                if (ar.failed()) {
                  stats.error(ar.cause().getClass().getSimpleName());
                } else if (ar.result() / 100 != 2) {
                  stats.error("HTTP " + ar.result());
                } else {
                  stats.latency.recordValue(OpenLoopStats.clamp((end - intended) / 1_000));
                  stats.sendLatency.recordValue(OpenLoopStats.clamp((end - sentAt) / 1_000));
                }
              }
              pump();
            });
  }

  private void delete(String id) {
    inFlight++;
    stats.calls++;
    stats.deletes++;
    RequestOptions ro =
        new RequestOptions()
            .setMethod(HttpMethod.DELETE)
            .setHost(plan.host())
            .setPort(plan.port())
            .setURI("/reservations/" + id)
            .setIdleTimeout(plan.requestTimeoutMs());
    client
        .request(ro)
        .compose(req -> req.send())
        .compose(resp -> resp.body().map(b -> resp.statusCode()))
        .onComplete(
            ar -> {
              inFlight--;
              if (ar.failed() || ar.result() != 200) {
                stats.deleteErrors++;
              }
              pump();
            });
  }

  /**
   * The {@code selection_id} string of a {@code /select_and_reserve} answer, found by scanning
   * the bytes for {@code "selection_id":"} (the node writes compact JSON, and generated ids need
   * no escapes); {@code null} when absent.
   */
  static String selectionId(Buffer body) {
    int n = body.length();
    outer:
    for (int i = 0; i + SELECTION_ID.length <= n; i++) {
      for (int j = 0; j < SELECTION_ID.length; j++) {
        if (body.getByte(i + j) != SELECTION_ID[j]) {
          continue outer;
        }
      }
      int start = i + SELECTION_ID.length;
      for (int e = start; e < n; e++) {
        byte b = body.getByte(e);
        if (b == '"') {
          return body.getString(start, e, "UTF-8");
        }
        if (b == '\\') {
          return null;
        }
      }
      return null;
    }
    return null;
  }
}
