package io.kvselect.server.cluster;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.load.LoadSync;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.sync.BusIndexRecovery;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.spi.cluster.ClusterManager;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Keeps this node's view of its peers' load and catalog in step over the clustered event bus, and
 * recovers index and catalog from a peer when the node joins. The one entry point of node-to-node
 * sync: build it with the clustered Vert.x and its cluster manager, pass {@link #loadSync()} and
 * {@link #catalogSync()} to the {@code SelectionServiceBuilder}, then {@link #attach} the built
 * service (after the KV-event coordinator listens to the catalog), and {@link #close} it before
 * closing Vert.x.
 *
 * <p>Protocol. Every node publishes one stream ({@link SyncStream}) on
 * {@link SyncAddresses#STREAM}: its booking steps, its catalog changes and, every
 * {@code reconcileInterval}, the digest of the reservations it owns, numbered 1, 2, 3, ... A
 * receiver applies each sender's messages in sequence order: an early message waits (bounded) for
 * the missing ones; after {@code gapTimeout} the gap is skipped, counted, and the sender is asked
 * for a digest at once. A sender heard for the first time is also asked for a digest. A digest
 * replaces the receiver's view of that sender's bookings, so after lost messages every node's
 * load converges by the next digest (within two intervals). A peer gone from the cluster
 * membership for {@code deadGrace} has its bookings released; its late messages are dropped until
 * it is a member again (a partition that healed), when its next message or digest restores them.
 * Catalog changes carry versions (last writer wins) and every digest carries the hash of the
 * sender's catalog; a receiver whose hash differs pulls the sender's catalog ({@link
 * CatalogRepair}), so a missed catalog change is repaired by the next digest.
 *
 * <p>This class wires the parts together, sends digests and serves the node address; the
 * receiving side of the stream (ordering, departed peers, the recovery hold, applying to the
 * service, membership) is {@link StreamReceiver}.
 *
 * <p>Ownership: everything mutable here and in its {@link StreamReceiver} (the per-sender streams,
 * the departed set, the messages held during recovery, timers, the recovery snapshots) is owned by
 * one event-loop context, captured at construction; consumers and timers run on it. Counters are atomic and read from
 * anywhere. Core calls made from it take only short partition / catalog locks.
 */
public final class PeerSync {

  /** Messages a receiver holds per sender behind a gap, and in total while recovering. */
  static final int HOLD_LIMIT = 100_000;

  private static final long DIGEST_REQUEST_SPACING_MS = 200;

  private final Vertx vertx;
  private final ClusterManager cluster;
  private final PeerSyncOptions options;
  private final String nodeId;
  private final Context context;
  private final SyncStream stream;
  private final EventBusLoadSync loadSync;
  private final EventBusCatalogSync catalogSync;
  private final BusLifecycleForwarder lifecycle;
  private final PeerSyncStats stats = new PeerSyncStats();

  /** The stream's receiving side (per-sender order, departed peers, recovery hold). */
  private final StreamReceiver receiver;

  /** The node's pause fence, set once before {@link #attach}; closed with this. */
  private volatile ClusterFence fence;

  private volatile BusIndexRecovery.Outcome recovery;
  private volatile JoinerCopy copy;
  private SelectionService service;
  private BusIndexRecovery recoveryServer;
  private volatile CatalogRepair catalogRepair;
  private MessageConsumer<Object> streamConsumer;
  private MessageConsumer<Object> nodeConsumer;
  private long digestTimer = -1;
  private long membershipTimer = -1;
  private long lastDigestMs = Long.MIN_VALUE / 2;
  private boolean digestScheduled;

  public PeerSync(Vertx vertx, ClusterManager cluster, PeerSyncOptions options) {
    this.vertx = vertx;
    this.cluster = cluster;
    this.options = options;
    this.nodeId = cluster.getNodeId();
    this.context = vertx.getOrCreateContext();
    this.stream = new SyncStream(vertx, context, nodeId);
    this.loadSync = new EventBusLoadSync(stream, () -> cluster.getNodes().size() > 1);
    this.catalogSync = new EventBusCatalogSync(stream);
    this.lifecycle =
        new BusLifecycleForwarder(vertx, cluster, BusLifecycleForwarder.DEFAULT_TIMEOUT);
    this.receiver = new StreamReceiver(vertx, nodeId, options, stats, this::requestDigest);
  }

  /** Over the cluster manager of a clustered {@code vertx}. */
  public PeerSync(Vertx vertx, PeerSyncOptions options) {
    this(vertx, ((io.vertx.core.internal.VertxInternal) vertx).clusterManager(), options);
  }

  /** What {@code /ready} says while {@link #attach} recovers catalog and index from a peer. */
  public static final String RECOVERING =
      "joining the cluster: recovering the worker catalog and KV index from a peer";

  /** Options for a node with {@code settings}: the reconciliation interval and what derives from it. */
  public static PeerSyncOptions options(ClusterSettings settings) {
    return PeerSyncOptions.withInterval(
        java.time.Duration.ofSeconds(settings.reconcileIntervalSecs()));
  }

  /** The load seam to pass to {@code SelectionServiceBuilder.loadSync}. */
  public LoadSync loadSync() {
    return loadSync;
  }

  /** The catalog seam to pass to {@code SelectionServiceBuilder.catalogSync}. */
  public CatalogSync catalogSync() {
    return catalogSync;
  }

  /**
   * The lifecycle seam to pass to {@code SelectionServiceBuilder.lifecycleForwarder}: calls for
   * bookings another node holds go to it ({@link BusLifecycleForwarder}).
   */
  public io.kvselect.core.service.LifecycleForwarder lifecycleForwarder() {
    return lifecycle;
  }

  public String nodeId() {
    return nodeId;
  }

  /** Closes {@code f} with this sync and reports it under {@code fence} in {@link #json}. */
  void fence(ClusterFence f) {
    this.fence = f;
  }

  /** The deferred frees' counters ({@link BusLifecycleForwarder#deferredFrees}). */
  public Map<String, Long> deferredFrees() {
    return lifecycle.deferredFrees();
  }

  /** Why the node refuses new selections now (fenced after a pause), or null. */
  public String fenceReason() {
    ClusterFence f = fence;
    return f == null ? null : f.reason();
  }

  public PeerSyncStats stats() {
    return stats;
  }

  /**
   * The report {@code GET /cluster} shows under {@code sync}: the reconciliation interval, the
   * recovery outcome and the counters.
   */
  public Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("reconcile_interval_secs", options.reconcileInterval().toMillis() / 1000.0);
    BusIndexRecovery.Outcome o = recovery;
    if (o != null) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("state", o.state());
      r.put("peer", o.peer());
      r.put("blocks", o.blocks());
      r.put("workers", o.workers());
      r.put("error", o.error());
      JoinerCopy c = copy;
      if (c != null) {
        c.report(r);
      }
      m.put("recovery", r);
    }
    m.put("sent", sent());
    m.put("load_steps_not_sent_alone", loadSync.notSentAlone.get());
    m.putAll(stats.snapshot());
    m.put("deferred_frees", lifecycle.deferredFrees());
    CatalogRepair cr = catalogRepair;
    if (cr != null) {
      m.put("catalog_repair", cr.snapshot());
    }
    ClusterFence f = fence;
    if (f != null) {
      m.put("fence", f.json());
    }
    return m;
  }

  /** Messages this node has published on its stream. */
  public long sent() {
    return stream.sent.get();
  }

  /** The recovery outcome once {@link #attach} completed, else null. */
  public BusIndexRecovery.Outcome recovery() {
    return recovery;
  }

  /**
   * Starts syncing {@code service}: registers the stream and node consumers (cluster-wide), copies
   * the catalog and index from the first peer that serves them ({@link JoinerCopy}: with
   * {@code events}, the node's KV-event coordinator or null, the events its listeners receive
   * meanwhile are held and applied on top of the copy; stream messages arriving meanwhile are held
   * and applied afterwards, in order), then starts the digest and membership timers.
   * Completes when the node is in step; never fails because of a peer.
   */
  public Future<BusIndexRecovery.Outcome> attach(
      SelectionService service, KvEventsCoordinator events) {
    Promise<BusIndexRecovery.Outcome> done = Promise.promise();
    context.runOnContext(
        v -> {
          this.service = service;
          this.recoveryServer =
              new BusIndexRecovery(
                  vertx,
                  service,
                  options.chunkBlocks(),
                  options.requestTimeout(),
                  () -> !receiver.recovering());
          this.catalogRepair = new CatalogRepair(vertx, service, options.requestTimeout());
          receiver.attach(service, catalogRepair);
          streamConsumer = vertx.eventBus().consumer(SyncAddresses.STREAM, receiver::onStream);
          nodeConsumer = vertx.eventBus().consumer(SyncAddresses.node(nodeId), this::onNode);
          Future.all(
                  streamConsumer.completion(), nodeConsumer.completion(), lifecycle.attach(service))
              .compose(
                  x -> {
                    copy = new JoinerCopy(vertx, context, catalogRepair, recoveryServer);
                    return copy.run(otherNodes(), events);
                  })
              .onComplete(
                  ar ->
                      context.runOnContext(
                          y -> {
                            if (ar.failed()) {
                              done.fail(ar.cause());
                              return;
                            }
                            BusIndexRecovery.Outcome o = ar.result();
                            recovery = o;
                            receiver.recovered();
                            digestTimer =
                                vertx.setPeriodic(
                                    options.reconcileInterval().toMillis(), t -> publishDigest());
                            long poll = Math.min(options.reconcileInterval().toMillis(), 1000);
                            membershipTimer =
                                vertx.setPeriodic(
                                    poll, t -> receiver.checkMembership(cluster.getNodes()));
                            publishDigest();
                            done.complete(o);
                          }));
        });
    return done.future();
  }

  /** Stops timers and consumers; held messages are dropped. Does not close Vert.x. */
  public Future<Void> close() {
    Promise<Void> done = Promise.promise();
    context.runOnContext(
        v -> {
          if (digestTimer >= 0) {
            vertx.cancelTimer(digestTimer);
          }
          if (membershipTimer >= 0) {
            vertx.cancelTimer(membershipTimer);
          }
          receiver.close();
          List<Future<Void>> f = new ArrayList<>();
          if (streamConsumer != null) {
            f.add(streamConsumer.unregister());
          }
          if (nodeConsumer != null) {
            f.add(nodeConsumer.unregister());
          }
          f.add(lifecycle.close());
          ClusterFence fc = fence;
          if (fc != null) {
            fc.close();
          }
          Future.join(f).<Void>mapEmpty().onComplete(done);
        });
    return done.future();
  }

  private List<String> otherNodes() {
    List<String> out = new ArrayList<>(cluster.getNodes());
    out.remove(nodeId);
    java.util.Collections.sort(out);
    return out;
  }

  // ---- node address: digest requests, recovery ----

  private void onNode(Message<Object> m) {
    ObjectNode doc;
    try {
      doc = SyncCodec.document(m.body());
    } catch (SyncCodec.UnknownVersion uv) {
      stats.unknownVersion.incrementAndGet();
      failIfRequest(m, 400, uv.getMessage());
      return;
    } catch (IOException | RuntimeException bad) {
      stats.malformed.incrementAndGet();
      failIfRequest(m, 400, "malformed sync message: " + bad.getMessage());
      return;
    }
    String kind = doc.path("kind").asText();
    if (kind.equals("digest_request")) {
      stats.digestRequests.incrementAndGet();
      scheduleDigest();
    } else if (kind.equals(CatalogRepair.REQUEST)) {
      catalogRepair.serve(m);
    } else if (!recoveryServer.handle(kind, doc, m)) {
      stats.malformed.incrementAndGet();
      failIfRequest(m, 400, "unknown kind `" + kind + "`");
    }
  }

  private static void failIfRequest(Message<Object> m, int code, String message) {
    if (m.replyAddress() != null) {
      m.fail(code, message);
    }
  }

  private void requestDigest(String peer) {
    ObjectNode d = SyncCodec.doc("digest_request");
    d.put("from", nodeId);
    vertx.eventBus().send(SyncAddresses.node(peer), SyncCodec.buffer(d));
  }

  // ---- sending digests ----

  private void publishDigest() {
    if (service == null) {
      return;
    }
    lastDigestMs = System.nanoTime() / 1_000_000;
    Supplier<com.fasterxml.jackson.databind.JsonNode> body =
        () -> {
          ObjectNode b = SyncCodec.digest(service.loadDigest());
          catalogRepair.stamp(b);
          return b;
        };
    stream.publish("digest", body);
    stats.digestsSent.incrementAndGet();
  }

  /** Publishes a digest now, or once {@value #DIGEST_REQUEST_SPACING_MS} ms after the last one. */
  private void scheduleDigest() {
    long now = System.nanoTime() / 1_000_000;
    long wait = lastDigestMs + DIGEST_REQUEST_SPACING_MS - now;
    if (wait <= 0) {
      publishDigest();
    } else if (!digestScheduled) {
      digestScheduled = true;
      vertx.setTimer(
          wait,
          t -> {
            digestScheduled = false;
            publishDigest();
          });
    }
  }
}
