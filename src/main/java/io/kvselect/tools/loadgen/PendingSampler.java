package io.kvselect.tools.loadgen;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;

/**
 * Polls {@code GET /loads} every 100 ms and keeps the largest and the running sum of the summed
 * {@code pending_count} of every partition until {@link #window()}; a poll is skipped while the
 * previous one is still open. Deployed by {@link QueueLoadRun}, once per run; its fields are
 * confined to its event loop.
 */
final class PendingSampler extends VerticleBase {
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
    QueueLoadRun.call(client, host, port, HttpMethod.GET, "/loads", null)
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
