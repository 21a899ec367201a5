package io.kvselect.server.drain;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the HTTP requests a node is answering, so that a drain can wait for them: every request
 * is counted when routing starts and uncounted when its response ends or its connection closes.
 * After {@link #close()} the counter still runs (requests that arrive during the drain are
 * answered, selections with 503), and {@link #idle()} completes the first time nothing is in
 * flight.
 *
 * <p>Thread-safe: shared by every HTTP verticle instance (their event loops count concurrently);
 * the counter is atomic and {@code idle} is completed by whichever thread brings it to zero.
 */
public final class RequestGate implements Handler<RoutingContext> {

  private final AtomicInteger inFlight = new AtomicInteger();
  private final CompletableFuture<Void> idle = new CompletableFuture<>();
  private volatile boolean closing;

  @Override
  public void handle(RoutingContext ctx) {
    inFlight.incrementAndGet();
    ctx.addEndHandler(
        v -> {
          if (inFlight.decrementAndGet() == 0 && closing) {
            idle.complete(null);
          }
        });
    ctx.next();
  }

  /** Starts the drain: {@link #idle()} completes once no request is in flight. */
  public void close() {
    closing = true;
    if (inFlight.get() == 0) {
      idle.complete(null);
    }
  }

  /** Requests being answered now. */
  public int inFlight() {
    return inFlight.get();
  }

  /** Completes once, after {@link #close()}, when no request is in flight. */
  public CompletableFuture<Void> idle() {
    return idle;
  }
}
