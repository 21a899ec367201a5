package io.kvselect.server.bus;

import io.kvselect.core.catalog.CatalogListener;
import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.service.BookingListener;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.api.ApiOperations;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes what other applications follow: one {@link BusAddresses#EVENTS_SELECTIONS} message per
 * booking and one {@link BusAddresses#EVENTS_WORKERS} message per catalog change, each a
 * {@code JsonObject} with {@code "v": 1}, this node's id and a per-address sequence number.
 *
 * <p>Threading: the service calls the listener methods on the booking's or catalog writer's
 * thread (the catalog writer holds the catalog lock); they only hand the change to this
 * publisher's context, whose event loop owns the sequence counters and builds and publishes the
 * messages. Calls from one thread are published in call order, so catalog changes (serialized by
 * the catalog lock) arrive in the order they were applied. After {@link #close} nothing more is
 * published (the service keeps its listeners, so the flag is the off switch).
 */
public final class BusEvents implements CatalogListener, BookingListener {

  private static final Logger LOG = LoggerFactory.getLogger(BusEvents.class);

  private final Vertx vertx;
  private final Context context;
  private final String node;
  private volatile boolean open = true;

  /** Owned by {@link #context}'s event loop. */
  private long selectionSeq;

  /** Owned by {@link #context}'s event loop. */
  private long workerSeq;

  private BusEvents(Vertx vertx, Context context, String node) {
    this.vertx = vertx;
    this.context = context;
    this.node = node;
  }

  /**
   * Creates the publisher on {@code context} and registers it with {@code service} as a booking
   * and catalog listener.
   */
  public static BusEvents install(Vertx vertx, Context context, SelectionService service) {
    BusEvents e = new BusEvents(vertx, context, nodeId(vertx));
    service.addBookingListener(e);
    service.addCatalogListener(e);
    return e;
  }

  /** The cluster manager's id of this node when clustered, else a random id for this process run. */
  static String nodeId(Vertx vertx) {
    if (vertx instanceof VertxInternal vi && vi.isClustered() && vi.clusterManager() != null) {
      return vi.clusterManager().getNodeId();
    }
    return UUID.randomUUID().toString();
  }

  /** The {@code node} field of every event this publisher sends. */
  public String node() {
    return node;
  }

  /** Stops publishing. */
  public void close() {
    open = false;
  }

  @Override
  public void booked(Booked b) {
    if (open) {
      context.runOnContext(v -> publishSelection(b));
    }
  }

  @Override
  public void workerUpserted(WorkerRecord previous, WorkerRecord current) {
    if (open) {
      context.runOnContext(
          v -> publishWorker(previous == null ? "registered" : "updated", previous, current));
    }
  }

  @Override
  public void workerRemoved(WorkerRecord removed) {
    if (open) {
      context.runOnContext(
          v -> publishWorker("removed", removed, removed.withLifecycle(Lifecycle.UNSCHEDULABLE)));
    }
  }

  private void publishSelection(Booked b) {
    JsonObject e =
        new JsonObject()
            .put("v", BusAddresses.EVENTS_VERSION)
            .put("seq", selectionSeq++)
            .put("node", node)
            .put("selection_id", b.selectionId())
            .put("model_name", b.partition().modelName())
            .put("routing_group", b.partition().routingGroup())
            .put("worker_id", u64(b.rank().workerId()))
            .put("dp_rank", b.rank().dpRank())
            .put("overlap_blocks", b.overlapBlocks())
            .put("isl_tokens", b.islTokens())
            .put("effective_prefill_tokens", b.effectivePrefillTokens())
            .put("block_size", b.blockSize());
    if (b.sessionId() != null) {
      e.put("session_id", b.sessionId());
    }
    publish(BusAddresses.EVENTS_SELECTIONS, e);
  }

  private void publishWorker(String kind, WorkerRecord previous, WorkerRecord current) {
    JsonObject e =
        new JsonObject()
            .put("v", BusAddresses.EVENTS_VERSION)
            .put("seq", workerSeq++)
            .put("node", node)
            .put("kind", kind)
            .put("worker_id", u64(current.workerId()))
            .put("model_name", current.spec().modelName())
            .put("routing_group", current.spec().routingGroup())
            .put("lifecycle", current.lifecycle().wireName())
            .put("previous_lifecycle", previous == null ? null : previous.lifecycle().wireName())
            .put("not_schedulable_reasons", new JsonArray(current.notSchedulableReasons()))
            .put("worker", new JsonObject(Buffer.buffer(ApiOperations.workerJson(current))));
    publish(BusAddresses.EVENTS_WORKERS, e);
  }

  private void publish(String address, JsonObject e) {
    if (!open) {
      return;
    }
    try {
      vertx.eventBus().publish(address, e);
    } catch (RuntimeException ex) {
      LOG.warn("could not publish on {}: {}", address, ex.toString());
    }
  }

  /** A u64 id as JSON writes it: unsigned (ids above {@code Long.MAX_VALUE} as a big integer). */
  static Object u64(long v) {
    return v >= 0 ? (Object) v : new BigInteger(Long.toUnsignedString(v));
  }
}
