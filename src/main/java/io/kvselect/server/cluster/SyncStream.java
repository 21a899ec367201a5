package io.kvselect.server.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The sending side of this node's sync stream: numbers every message (1, 2, 3, ...) and publishes
 * it on {@link SyncAddresses#STREAM}. Numbering and hand-over to the owning context happen under
 * one monitor, so messages leave in sequence order and a digest built inside {@link #publish}'s
 * body supplier reflects every step numbered before it (callers publish a step only after
 * applying it locally).
 *
 * <p>Ownership: {@code seq} is guarded by this object's monitor; the event-bus publications run on
 * {@code context} in submission order. Callers never block: the monitor is held only to build one
 * message.
 */
final class SyncStream {

  private final Vertx vertx;
  private final Context context;
  private final String nodeId;

  /** Immutable after construction: names this node in every message's header. */
  private final DeliveryOptions from;

  private long seq;
  final AtomicLong sent = new AtomicLong();

  SyncStream(Vertx vertx, Context context, String nodeId) {
    this.vertx = vertx;
    this.context = context;
    this.nodeId = nodeId;
    this.from = new DeliveryOptions().addHeader(SyncAddresses.FROM_HEADER, nodeId);
  }

  /**
   * Numbers and publishes one message whose body {@code body} builds (inside the monitor). The
   * stage is complete on return: the message is handed to the event bus, never awaited.
   */
  CompletionStage<Void> publish(String kind, Supplier<JsonNode> body) {
    return publishEncoded(seq -> SyncCodec.envelope(kind, nodeId, seq, body.get()));
  }

  /**
   * {@link #publish(String, Supplier)} for a message {@code encode} writes whole (envelope and
   * body) from its sequence number.
   */
  CompletionStage<Void> publishEncoded(java.util.function.LongFunction<Buffer> encode) {
    try {
      synchronized (this) {
        Buffer b = encode.apply(++seq);
        context.runOnContext(
            v -> {
              vertx.eventBus().publish(SyncAddresses.STREAM, b, from);
              sent.incrementAndGet();
            });
      }
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The node id this stream names as its sender. */
  String nodeId() {
    return nodeId;
  }

  /** The last number given out. */
  synchronized long lastSeq() {
    return seq;
  }
}
