// Over 400 lines: both ends of one forwarding protocol (the sender's timeout and retry, the
// holder's handler and its replies), kept together so the two stay in step.
package io.kvselect.server.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.service.LifecycleForwarder;
import io.kvselect.core.service.LifecycleStep;
import io.kvselect.core.service.SelectionService;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.spi.cluster.ClusterManager;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Carries lifecycle calls ({@code prefill_complete}, {@code output_block}, {@code free}) for a
 * booking another node holds to that node over the clustered event bus, and serves the ones
 * forwarded to this node ({@link SyncAddresses#lifecycle}).
 *
 * <p>Where a step goes: to its origin when this node's load view names one (a peer's booking
 * learned through load sync); otherwise (the sync has not arrived yet, or the id is unknown) to
 * every other member at once, the holder answering. The answer is the holder's: success, or its
 * failure with the same {@link ErrorCode} and message, so a forwarded call answers as a local one.
 * 404 when no member holds the booking.
 *
 * <p>Dead origins. The origin is not a member any more (it stopped, or the membership noticed its
 * death): 404, since a node's reservations die with it and the survivors release their view of
 * them after the dead-node grace. The origin is still listed but its consumer is gone (it is
 * stopping): 404 as well. The origin did not answer within the timeout (a death the membership
 * has not noticed yet): 503, retry; the booking may still exist. Asking every member for an
 * unknown id answers 503 in the same way when one of them did not answer and none held it.
 *
 * <p>Deferred frees (hinted handoff, {@link DeferredFrees}). A free that could not reach its
 * holder (the holder left the membership, timed out, or is in its silent hold; or nobody held the
 * id while a member was missing) is kept for {@link FreeHandoff#HINT_TTL} and delivered once the holder is a
 * member again and answers: a member removed after a pause or a partition merges back with its
 * node id and its bookings, and these frees release what its clients freed meanwhile. The
 * caller's answer is unchanged (404 or 503 as above); the message says the free is kept.
 * {@link FreeHandoff} notices members that came back and delivers their frees, from a timer on the
 * attaching context.
 *
 * <p>Wire form: {@code {"v": 1, "kind": "lifecycle", "from", "step": "prefill_complete" |
 * "output_block" | "free", "id", "decay_fraction"}}; the reply {@code {"v": 1, "kind":
 * "lifecycle_result", "ok": true}} or {@code {..., "ok": false, "code": "<ErrorCode>", "error"}}.
 *
 * <p>Thread-safe: the consumer and timer are set once by {@link #attach} (on the caller's context)
 * and removed by {@link #close}; {@link #forward} keeps its state in the stage it returns; the
 * kept frees and the membership they follow are owned by {@link FreeHandoff}.
 */
public final class BusLifecycleForwarder implements LifecycleForwarder {

  /** The send timeout of a forwarded step. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  private final Vertx vertx;
  private final ClusterManager cluster;
  private final String nodeId;
  private final long timeoutMs;
  private volatile MessageConsumer<Object> consumer;

  /**
   * Origins whose last forward timed out, until when they are not waited for again: a step for
   * one of them answers 503 at once (a paused or cut-off member costs one timeout per
   * {@link #SILENT_HOLD_NANOS}, not one per request), until it answers or the membership removes it.
   * A concurrent map written by the completions of forwards.
   */
  private final java.util.Map<String, Long> silentUntil =
      new java.util.concurrent.ConcurrentHashMap<>();

  static final long SILENT_HOLD_NANOS = 2_000_000_000L;

  private final FreeHandoff handoff;
  private long timer = -1;

  public BusLifecycleForwarder(Vertx vertx, ClusterManager cluster, Duration timeout) {
    this.vertx = vertx;
    this.cluster = cluster;
    this.nodeId = cluster.getNodeId();
    this.timeoutMs = Math.max(1, timeout.toMillis());
    this.handoff =
        new FreeHandoff(
            nodeId,
            new FreeHandoff.Courier() {
              @Override
              public CompletionStage<FreeHandoff.Delivery> free(String node, String id) {
                return ask(node, new LifecycleStep.Free(id))
                    .thenApply(
                        a ->
                            a.failure() != null
                                ? FreeHandoff.Delivery.NOT_HELD
                                : a.gone()
                                    ? FreeHandoff.Delivery.NO_CONSUMER
                                    : a.silent()
                                        ? FreeHandoff.Delivery.SILENT
                                        : a.timedOut()
                                            ? FreeHandoff.Delivery.NO_CONSUMER
                                            : FreeHandoff.Delivery.FREED);
              }

              @Override
              public boolean silent(String node, long now) {
                Long until = silentUntil.get(node);
                return until != null && now - until < 0;
              }

              @Override
              public void silence(String node) {
                silentUntil.put(node, System.nanoTime() + SILENT_HOLD_NANOS);
              }
            });
  }

  /** Serves steps forwarded to this node with {@code service}; completes once registered cluster-wide. */
  public Future<Void> attach(SelectionService service) {
    MessageConsumer<Object> c =
        vertx.eventBus().consumer(SyncAddresses.lifecycle(nodeId), m -> serve(service, m));
    consumer = c;
    handoff.start(cluster.getNodes());
    timer = vertx.setPeriodic(FreeHandoff.TICK_MS, t -> handoff.tick(cluster.getNodes()));
    return c.completion();
  }

  /** Stops serving forwarded steps and delivering hints (the ones left are dropped). */
  public Future<Void> close() {
    handoff.stop();
    if (timer >= 0) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
    MessageConsumer<Object> c = consumer;
    consumer = null;
    return c == null ? Future.succeededFuture() : c.unregister();
  }

  // ---- sending ----

  @Override
  public CompletionStage<Void> forward(String origin, LifecycleStep step) {
    List<String> live = new ArrayList<>(cluster.getNodes());
    handoff.noteDepartures(live);
    if (origin != null && !origin.equals(nodeId)) {
      if (!live.contains(origin)) {
        silentUntil.remove(origin);
        return CompletableFuture.failedFuture(departed(step, origin, hint(origin, step)));
      }
      Long until = silentUntil.get(origin);
      if (until != null && System.nanoTime() - until < 0) {
        return CompletableFuture.failedFuture(
            SelectionException.notReady(
                "node "
                    + origin
                    + ", which holds"
                    + " reservation "
                    + step.id()
                    + ", did not answer a forwarded step within "
                    + timeoutMs
                    + " ms just now; retry (it is released once the cluster removes that node)"
                    + kept(hint(origin, step))));
      }
      return ask(origin, step)
          .thenApply(
              a -> {
                if (a.timedOut()) {
                  silentUntil.put(origin, System.nanoTime() + SILENT_HOLD_NANOS);
                } else {
                  silentUntil.remove(origin);
                }
                if (a.failure() != null) {
                  throw a.failure();
                }
                if (a.timedOut()) {
                  throw SelectionException.notReady(
                      "node "
                          + origin
                          + ", which holds reservation "
                          + step.id()
                          + ", did not answer within "
                          + timeoutMs
                          + " ms; retry"
                          + kept(hint(origin, step)));
                }
                if (a.gone()) {
                  throw departed(step, origin, hint(origin, step));
                }
                return null;
              });
    }
    live.remove(nodeId);
    if (live.isEmpty()) {
      return CompletableFuture.failedFuture(notFound(step, hintForAny(step)));
    }
    return askAll(live, step);
  }

  /** Keeps a free for {@code origin}; true when it was kept. */
  private boolean hint(String origin, LifecycleStep step) {
    return handoff.keepFor(origin, step);
  }

  private boolean hintForAny(LifecycleStep step) {
    return handoff.keepForAny(step);
  }

  private static String kept(boolean kept) {
    return kept ? "; the free is kept and delivered to that node when it answers again" : "";
  }

  /** Asks every node in {@code others}: the first holder's answer wins; 404 when none holds it. */
  private CompletionStage<Void> askAll(List<String> others, LifecycleStep step) {
    CompletableFuture<Void> out = new CompletableFuture<>();
    AtomicInteger left = new AtomicInteger(others.size());
    AtomicBoolean silent = new AtomicBoolean();
    List<String> unanswered = java.util.Collections.synchronizedList(new ArrayList<>());
    for (String peer : others) {
      ask(peer, step)
          .whenComplete(
              (a, err) -> {
                if (err == null && a.failure() == null && !a.timedOut() && !a.gone()) {
                  out.complete(null);
                } else if (err == null
                    && a.failure() != null
                    && a.failure().code() != ErrorCode.NOT_FOUND) {
                  out.completeExceptionally(a.failure());
                } else if (err != null || a.timedOut()) {
                  silent.set(true);
                  unanswered.add(peer);
                } else if (a.gone()) {
                  // listed without a consumer: stopping, or just merged back before its
                  // registration
                  // spread; its answer is not "not held", so a free is kept for it
                  unanswered.add(peer);
                }
                if (left.decrementAndGet() == 0 && !out.isDone()) {
                  boolean kept = false;
                  for (String p : unanswered) {
                    kept |= hint(p, step);
                  }
                  kept |= hintForAny(step);
                  out.completeExceptionally(
                      silent.get()
                          ? SelectionException.notReady(
                              "reservation "
                                  + step.id()
                                  + " was not found on the nodes that"
                                  + " answered, and not every node answered within "
                                  + timeoutMs
                                  + " ms; retry"
                                  + (kept
                                      ? "; the free is kept and delivered to a node that answers again or comes back"
                                      : ""))
                          : notFound(step, kept));
                }
              });
    }
    return out;
  }

  /** One node's answer: ok, its failure, no answer in time, or no consumer there (it is stopping). */
  private record Answer(
      SelectionException failure, boolean timedOut, boolean gone, boolean silent) {
    Answer(SelectionException failure, boolean timedOut, boolean gone) {
      this(failure, timedOut, gone, timedOut);
    }
  }

  private CompletionStage<Answer> ask(String node, LifecycleStep step) {
    ObjectNode d = SyncCodec.doc("lifecycle");
    d.put("from", nodeId);
    d.put("id", step.id());
    if (step instanceof LifecycleStep.PrefillComplete) {
      d.put("step", "prefill_complete");
    } else if (step instanceof LifecycleStep.OutputBlock o) {
      d.put("step", "output_block");
      if (o.decayFraction() != null) {
        d.put("decay_fraction", o.decayFraction());
      }
    } else {
      d.put("step", "free");
    }
    CompletableFuture<Answer> out = new CompletableFuture<>();
    vertx
        .eventBus()
        .request(
            SyncAddresses.lifecycle(node),
            SyncCodec.buffer(d),
            new DeliveryOptions().setSendTimeout(timeoutMs))
        .onComplete(
            ar -> {
              if (ar.failed()) {
                ReplyFailure f =
                    ar.cause() instanceof ReplyException re ? re.failureType() : ReplyFailure.ERROR;
                if (f == ReplyFailure.RECIPIENT_FAILURE) {
                  // the node refused the message itself (another version, say): not the holder's
                  // answer
                  out.complete(
                      new Answer(
                          new SelectionException(
                              ErrorCode.INTERNAL,
                              "node "
                                  + node
                                  + " refused the forwarded step: "
                                  + ar.cause().getMessage()),
                          false,
                          false));
                } else {
                  // no answer: TIMEOUT is silence; ERROR (the connection failed: stopping, or dead)
                  // is answered like a timeout by forward(), but is no reason to wait the node out
                  out.complete(
                      new Answer(
                          null,
                          f != ReplyFailure.NO_HANDLERS,
                          f == ReplyFailure.NO_HANDLERS,
                          f == ReplyFailure.TIMEOUT));
                }
                return;
              }
              out.complete(new Answer(result(ar.result().body()), false, false));
            });
    return out;
  }

  /** The failure a reply carries, or null for success. */
  private static SelectionException result(Object body) {
    try {
      ObjectNode o = SyncCodec.document(body);
      if (o.path("ok").asBoolean(false)) {
        return null;
      }
      ErrorCode code = ErrorCode.valueOf(o.path("code").asText("INTERNAL"));
      return new SelectionException(code, o.path("error").asText(""));
    } catch (IOException | IllegalArgumentException bad) {
      return new SelectionException(
          ErrorCode.INTERNAL, "malformed lifecycle answer: " + bad.getMessage());
    }
  }

  private static SelectionException notFound(LifecycleStep step, boolean kept) {
    return SelectionException.notFound(
        "reservation "
            + step.id()
            + " not found"
            + (kept
                ? " (a member left the cluster lately: the free is kept and delivered to any node that comes back)"
                : ""));
  }

  private static SelectionException departed(LifecycleStep step, String origin, boolean kept) {
    return SelectionException.notFound(
        "reservation "
            + step.id()
            + " not found: it was booked on node "
            + origin
            + ", which has left the cluster (its reservations are released)"
            + (kept ? "; the free is kept and delivered to that node if it comes back" : ""));
  }

  // ---- deferred frees ----

  /** The deferred frees' counters, for {@code GET /cluster} and the meters. */
  public Map<String, Long> deferredFrees() {
    return handoff.counters();
  }

  // ---- serving ----

  private static void serve(SelectionService service, Message<Object> m) {
    LifecycleStep step;
    try {
      step = step(SyncCodec.document(m.body()));
    } catch (IOException | RuntimeException bad) {
      m.fail(400, "malformed lifecycle message: " + bad.getMessage());
      return;
    }
    CompletionStage<Void> done;
    try {
      done = service.applyForwarded(step);
    } catch (RuntimeException e) {
      done = CompletableFuture.failedFuture(e);
    }
    done.whenComplete(
        (v, err) -> {
          ObjectNode r = SyncCodec.doc("lifecycle_result");
          if (err == null) {
            r.put("ok", true);
          } else {
            Throwable u = SelectionException.unwrap(err);
            r.put("ok", false);
            r.put(
                "code",
                u instanceof SelectionException se ? se.code().name() : ErrorCode.INTERNAL.name());
            r.put("error", u instanceof SelectionException ? u.getMessage() : "internal error");
          }
          m.reply(SyncCodec.buffer(r));
        });
  }

  private static LifecycleStep step(ObjectNode d) throws IOException {
    JsonNode id = d.get("id");
    if (id == null || !id.isTextual() || id.asText().isEmpty()) {
      throw new IOException("missing string field `id`");
    }
    String s = d.path("step").asText();
    switch (s) {
      case "prefill_complete":
        return new LifecycleStep.PrefillComplete(id.asText());
      case "free":
        return new LifecycleStep.Free(id.asText());
      case "output_block":
        JsonNode f = d.get("decay_fraction");
        if (f != null && !f.isNull() && !f.isNumber()) {
          throw new IOException("`decay_fraction` must be a number");
        }
        return new LifecycleStep.OutputBlock(
            id.asText(), f == null || f.isNull() ? null : f.asDouble());
      default:
        throw new IOException("unknown step `" + s + "`");
    }
  }
}
