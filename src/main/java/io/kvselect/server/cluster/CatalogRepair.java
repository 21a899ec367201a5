package io.kvselect.server.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.service.SelectionService;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Catalog anti-entropy: every node's periodic digest carries the hash of its catalog
 * ({@link SelectionService#catalogDigest}); a receiver whose own hash differs asks that sender for
 * its whole catalog ({@code catalog_request} to {@code kvselect.sync.node.<peer>}, answered with
 * {@code {"kind": "catalog", "entries": [{"kind": "upserted"|"removed", "body": ...}]}}) and
 * applies every entry through {@link SelectionService#applyPeerCatalog}, which keeps the newer
 * version of each worker. So a catalog change a peer missed (published before its subscription
 * reached the sender, or lost in a partition) and two changes of one worker made at the same
 * moment on two nodes converge within one reconcile interval of the next digest; the side that
 * held the newer version pulls nothing back, the other pulls it.
 *
 * <p>At most one pull per peer is in flight, and a peer is asked at most once a second. A pull
 * whose request fails (timed out, no handler: {@code timeout}) is counted and retried at the
 * peer's next digest. A pull that was answered but left the two catalogs different (an entry this
 * node refuses or cannot read, say from a newer version) is not repeated while both hashes stay
 * as they were: it would fetch the same answer, be refused the same way and log it again, once a
 * second for as long as the two nodes run; either side's next catalog change allows a new pull.
 *
 * <p>Ownership: the pull bookkeeping (in-flight, spacing, the settled hashes) is owned by the sync context (the {@link PeerSync} context
 * that delivers digests); the counters are atomics, read anywhere.
 */
final class CatalogRepair {

  private static final Logger LOG = LoggerFactory.getLogger(CatalogRepair.class);
  static final String REQUEST = "catalog_request";
  private static final Duration MIN_SPACING = Duration.ofSeconds(1);

  private final Vertx vertx;
  private final SelectionService service;
  private final Duration timeout;
  private final Set<String> inFlight = new HashSet<>();
  private final long minSpacingMs;
  private final Map<String, Long> lastPullMs = new HashMap<>();

  /** Per peer: its hash and this node's after the last answered pull that left them different. */
  private final Map<String, long[]> settled = new HashMap<>();

  final AtomicLong pulls = new AtomicLong();
  final AtomicLong pullFailures = new AtomicLong();
  final AtomicLong repaired = new AtomicLong();
  final AtomicLong served = new AtomicLong();

  CatalogRepair(Vertx vertx, SelectionService service, Duration timeout) {
    this(vertx, service, timeout, MIN_SPACING);
  }

  CatalogRepair(Vertx vertx, SelectionService service, Duration timeout, Duration minSpacing) {
    this.vertx = vertx;
    this.service = service;
    this.timeout = timeout;
    this.minSpacingMs = minSpacing.toMillis();
  }

  /** Adds this node's catalog hash to an outgoing digest {@code body}. */
  void stamp(ObjectNode body) {
    body.put("catalog", service.catalogDigest());
  }

  /**
   * A digest from {@code peer} was applied: pulls its catalog when the hash it carries differs
   * from this node's. A digest without one (an older sender) changes nothing.
   */
  void check(String peer, JsonNode digestBody) {
    JsonNode h = digestBody.get("catalog");
    if (h == null
        || !h.isIntegralNumber()
        || h.asLong() == service.catalogDigest()
        || inFlight.contains(peer)) {
      return;
    }
    long theirs = h.asLong();
    long[] was = settled.get(peer);
    if (was != null && was[0] == theirs && was[1] == service.catalogDigest()) {
      return;
    }
    long now = System.nanoTime() / 1_000_000;
    Long last = lastPullMs.get(peer);
    if (last != null && now - last < minSpacingMs) {
      return;
    }
    lastPullMs.put(peer, now);
    inFlight.add(peer);
    pulls.incrementAndGet();
    vertx
        .eventBus()
        .<Object>request(
            SyncAddresses.node(peer),
            SyncCodec.buffer(SyncCodec.doc(REQUEST)),
            new DeliveryOptions().setSendTimeout(timeout.toMillis()))
        .compose(reply -> applyAll(peer, reply.body()))
        .onComplete(
            ar -> {
              inFlight.remove(peer);
              long ours = service.catalogDigest();
              if ((ar.succeeded() || !(ar.cause() instanceof ReplyException)) && ours != theirs) {
                settled.put(peer, new long[] {theirs, ours});
                LOG.info(
                    "catalog of peer {} still differs after a pull{}; not pulling again until either catalog "
                        + "changes",
                    peer,
                    ar.failed()
                        ? " (its answer was refused: " + ar.cause().getMessage() + ")"
                        : "");
              } else {
                settled.remove(peer);
              }
              if (ar.failed()) {
                pullFailures.incrementAndGet();
                LOG.debug("catalog pull from {} failed: {}", peer, ar.cause().toString());
              } else if (ar.result() > 0) {
                repaired.addAndGet(ar.result());
                LOG.info("catalog repaired from peer {}: {} worker(s) changed", peer, ar.result());
              }
            });
  }

  /**
   * A joiner's first catalog: asks {@code peers} in turn for their whole catalog and applies the
   * first answer (no spacing, no bookkeeping). Completes with the workers applied, or -1 when no
   * peer answered; never fails.
   */
  Future<Integer> pullFirst(List<String> peers) {
    Future<Integer> f = Future.succeededFuture(-1);
    for (String peer : peers) {
      f =
          f.compose(
              n ->
                  n >= 0
                      ? Future.succeededFuture(n)
                      : vertx
                          .eventBus()
                          .<Object>request(
                              SyncAddresses.node(peer),
                              SyncCodec.buffer(SyncCodec.doc(REQUEST)),
                              new DeliveryOptions().setSendTimeout(timeout.toMillis()))
                          .compose(reply -> applyAll(peer, reply.body()))
                          .recover(
                              err -> {
                                LOG.info("catalog from {} not copied: {}", peer, err.getMessage());
                                return Future.succeededFuture(-1);
                              }));
    }
    return f;
  }

  /** Applies a {@code catalog} answer entry by entry; completes with how many changed the catalog. */
  private Future<Integer> applyAll(String peer, Object body) {
    List<CatalogSync.CatalogChange> changes = new java.util.ArrayList<>();
    try {
      ObjectNode doc = SyncCodec.document(body);
      for (JsonNode e : doc.path("entries")) {
        CatalogSync.CatalogChange c = SyncCodec.catalog(e.path("kind").asText(), e.path("body"));
        if (c == null) {
          throw new IOException("unknown catalog entry kind `" + e.path("kind").asText() + "`");
        }
        changes.add(c);
      }
    } catch (IOException | RuntimeException bad) {
      return Future.failedFuture(bad);
    }
    Future<Integer> n = Future.succeededFuture(0);
    for (CatalogSync.CatalogChange c : changes) {
      n =
          n.compose(
              k ->
                  Future.fromCompletionStage(service.applyPeerCatalog(c))
                      .map(changed -> k + (changed ? 1 : 0))
                      .recover(
                          err -> {
                            LOG.warn(
                                "catalog entry for worker {} from {} refused: {}",
                                Long.toUnsignedString(c.workerId()),
                                peer,
                                err.toString());
                            return Future.succeededFuture(k);
                          }));
    }
    return n;
  }

  /** Answers a peer's {@code catalog_request} with this node's whole catalog. */
  void serve(Message<Object> m) {
    served.incrementAndGet();
    ObjectNode reply = SyncCodec.doc("catalog");
    ArrayNode entries = reply.putArray("entries");
    for (CatalogSync.CatalogChange c : service.catalogState()) {
      ObjectNode e = entries.addObject();
      e.put("kind", SyncCodec.kind(c));
      e.set("body", SyncCodec.catalog(c));
    }
    if (m.replyAddress() != null) {
      m.reply(SyncCodec.buffer(reply));
    }
  }

  /** The counters, for {@code /cluster} under {@code sync.catalog_repair}. */
  Map<String, Long> snapshot() {
    Map<String, Long> out = new LinkedHashMap<>();
    out.put("pulls", pulls.get());
    out.put("pull_failures", pullFailures.get());
    out.put("workers_repaired", repaired.get());
    out.put("served", served.get());
    return out;
  }
}
