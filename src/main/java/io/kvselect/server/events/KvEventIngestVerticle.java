package io.kvselect.server.events;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

/**
 * Owns a {@link KvEventIngest} for the lifetime of a deployment: starts its threads on deploy and
 * stops them on undeploy. The threads are the ingest's own named threads, never an event loop;
 * stopping joins them on a worker thread. Subscriptions go through {@link #ingest()}, whose
 * methods are safe to call from an event loop.
 */
public final class KvEventIngestVerticle extends VerticleBase {

  private final KvEventIngestOptions options;
  private final BatchSink sink;
  private final java.util.function.IntConsumer afterRound;
  private volatile KvEventIngest ingest;

  public KvEventIngestVerticle(KvEventIngestOptions options, BatchSink sink) {
    this(options, sink, poller -> {});
  }

  /** With {@code afterRound} called by each poller at the end of every round ({@link KvEventIngest}). */
  public KvEventIngestVerticle(
      KvEventIngestOptions options, BatchSink sink, java.util.function.IntConsumer afterRound) {
    this.options = options;
    this.sink = sink;
    this.afterRound = afterRound;
  }

  @Override
  public Future<?> start() {
    ingest = new KvEventIngest(options, sink, java.time.Clock.systemUTC(), afterRound);
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    KvEventIngest running = ingest;
    if (running == null) {
      return Future.succeededFuture();
    }
    return vertx.executeBlocking(
        () -> {
          running.close();
          return null;
        },
        false);
  }

  /** The running ingest; null before the verticle started. */
  public KvEventIngest ingest() {
    return ingest;
  }
}
