package io.kvselect.server.session;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.session.SessionAffinity;
import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.bus.LocalCodec;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The selection service's side of the node's session table, owned by its
 * {@link SessionAffinityVerticle}: the table's housekeeping (the idle sweep, dropping a removed
 * worker's bindings) is a request to {@link LocalAddresses#SESSION_AFFINITY}, answered by the
 * verticle with the table's own result or exception; the request path's calls run inline on the
 * table ({@link #lookup}), because a bus round trip there was measured too costly. The stages complete on the caller's
 * context when it has one (an HTTP or bus handler), else on an event loop, never on the caller's
 * thread before returning.
 *
 * <p>Failures of the hop itself map as an unavailable dependency does: no consumer (the node is
 * starting or stopping) and a reply later than {@link #SEND_TIMEOUT_MS} fail with
 * {@link SelectionException} NOT_READY (503, retryable); the table's own failures (a bad session
 * id, a full table) come back as they were raised.
 *
 * <p>Stateless apart from the bus it sends on and the table it names; any thread.
 */
public final class BusSessionAffinity implements SessionAffinity {

  /**
   * How long a call waits for the table's verticle. The table answers locally in microseconds, and
   * a clustered table gives up on the shared map within its own budget (tens of milliseconds), so
   * this only bounds a stuck node.
   */
  public static final long SEND_TIMEOUT_MS = 5_000;

  private final EventBus bus;
  private final SessionAffinity owned;

  /** Fronts {@code owned}, which only the {@link SessionAffinityVerticle} deployed for it may call. */
  public BusSessionAffinity(Vertx vertx, SessionAffinity owned) {
    LocalCodec.register(vertx);
    this.bus = vertx.eventBus();
    this.owned = owned;
  }

  /** The table this front sends to: its verticle's, and what metrics and {@code /cluster} inspect. */
  public SessionAffinity owned() {
    return owned;
  }

  /**
   * The request path's calls (lookup, bind and lease, release) run inline, on the caller's thread,
   * on the owned table (thread-safe; on a cluster member its near cache and budget answer first):
   * a bus round trip per call cost session-bound bookings 23-43% of their throughput
   * (docs/design.md, "Communication inside a node").
   */
  @Override
  public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
    return owned.lookup(partition, sessionId);
  }

  /** Inline, see {@link #lookup}. */
  @Override
  public CompletionStage<WorkerRank> bindAndLease(
      String partition, String sessionId, WorkerRank expected, WorkerRank target, String leaseId) {
    return owned.bindAndLease(partition, sessionId, expected, target, leaseId);
  }

  /** Inline, see {@link #lookup}. */
  @Override
  public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
    return owned.releaseLease(partition, sessionId, leaseId);
  }

  @Override
  public CompletionStage<Integer> sweep() {
    return call(new SessionCommand.Sweep());
  }

  @Override
  public CompletionStage<Void> removeWorker(long workerId) {
    return call(new SessionCommand.RemoveWorker(workerId));
  }

  /** The owned table's local view, read directly: a count for metrics and tests. */
  @Override
  public int size() {
    return owned.size();
  }

  @SuppressWarnings("unchecked")
  private <T> CompletionStage<T> call(SessionCommand c) {
    CompletableFuture<T> out = new CompletableFuture<>();
    DeliveryOptions options = LocalCodec.options().setSendTimeout(SEND_TIMEOUT_MS);
    bus.request(LocalAddresses.SESSION_AFFINITY, c, options)
        .onComplete(
            ar -> {
              if (ar.failed()) {
                out.completeExceptionally(hopFailure(ar.cause()));
              } else if (ar.result().body() instanceof SessionCommand.Failed f) {
                out.completeExceptionally(f.cause());
              } else {
                out.complete((T) ar.result().body());
              }
            });
    return out;
  }

  private static Throwable hopFailure(Throwable t) {
    if (t instanceof ReplyException re && re.failureType() == ReplyFailure.TIMEOUT) {
      return SelectionException.notReady(
          "the session table did not answer within " + SEND_TIMEOUT_MS + " ms");
    }
    if (t instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS) {
      return SelectionException.notReady(
          "the session table is not running (node starting or stopping)");
    }
    return SelectionException.notReady("the session table failed: " + t.getMessage());
  }
}
