package io.kvselect.server.session;

import io.kvselect.core.session.SessionAffinity;
import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.bus.LocalCodec;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.concurrent.CompletionStage;

/**
 * The session-affinity verticle: the owner of the node's session table for the lifetime of the
 * deployment. It runs the table's housekeeping (the idle sweep of the node's periodic expiry,
 * dropping a removed worker's bindings), which the selection service sends to
 * {@link LocalAddresses#SESSION_AFFINITY} ({@link BusSessionAffinity}), by calling the table: a
 * standalone node's {@code LocalSessionAffinity} (wrapped for Dynamo's replica sync when that
 * exchanges bindings), or on a cluster member the Hazelcast map behind its near cache and latency
 * budget ({@code BudgetedSessionAffinity}). Calls start on this verticle's context in the order
 * they arrive; a call whose stage completes later (the shared map) is answered when it does.
 *
 * <p>Two more callers exist beside it, both through the table's own thread safety (its monitor,
 * or per-key entry processors on the shared map): the request path's lookups, binds and releases,
 * which run inline on the caller's thread because a bus round trip there cost session-bound
 * bookings 23-43% of their throughput; and the bindings received from Dynamo's replica peers,
 * applied by the replica-sync thread.
 */
public final class SessionAffinityVerticle extends VerticleBase {

  private final SessionAffinity table;

  /** This verticle's context. */
  private MessageConsumer<SessionCommand> calls;

  public SessionAffinityVerticle(SessionAffinity table) {
    this.table = table;
  }

  @Override
  public Future<?> start() {
    LocalCodec.register(vertx);
    calls = vertx.eventBus().localConsumer(LocalAddresses.SESSION_AFFINITY, this::answer);
    return calls.completion();
  }

  @Override
  public Future<?> stop() {
    MessageConsumer<SessionCommand> c = calls;
    return c == null ? Future.succeededFuture() : c.unregister();
  }

  private void answer(Message<SessionCommand> m) {
    CompletionStage<?> result;
    try {
      result = call(m.body());
    } catch (RuntimeException e) {
      m.reply(new SessionCommand.Failed(e), LocalCodec.options());
      return;
    }
    result.whenComplete(
        (v, e) ->
            m.reply(e == null ? v : new SessionCommand.Failed(unwrap(e)), LocalCodec.options()));
  }

  private CompletionStage<?> call(SessionCommand c) {
    if (c instanceof SessionCommand.Sweep) {
      return table.sweep();
    } else if (c instanceof SessionCommand.RemoveWorker w) {
      return table.removeWorker(w.workerId());
    }
    throw new IllegalArgumentException("not a session-table call: " + c);
  }

  private static Throwable unwrap(Throwable e) {
    return e instanceof java.util.concurrent.CompletionException && e.getCause() != null
        ? e.getCause()
        : e;
  }
}
