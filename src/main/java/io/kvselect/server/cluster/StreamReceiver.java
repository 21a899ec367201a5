package io.kvselect.server.cluster;

import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.load.LoadDigest;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.service.SelectionService;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving side of node-to-node sync, for {@link PeerSync}: handles the cluster-wide stream
 * ({@link SyncAddresses#STREAM}), dropping this node's own publications, unparseable messages and
 * those of departed senders, holding messages while the node recovers, and handing the rest to
 * {@link SenderStreams} to be applied in each sender's order; applies one message to the service
 * (a booking step, a digest with its catalog-hash check, a catalog change); and checks the
 * membership, releasing a peer gone for {@code deadGrace} and dropping its messages until it is a
 * member again.
 *
 * <p>Owner: the sync context of its {@link PeerSync}: every method, consumer and timer runs there
 * (the departed set, the messages held during recovery, the per-sender streams). The recovering
 * flag is volatile because the recovery server reads it; counters go to the shared {@link
 * PeerSyncStats}.
 */
final class StreamReceiver {

  private static final Logger LOG = LoggerFactory.getLogger(StreamReceiver.class);

  private static final int DEPARTED_LIMIT = 4096;

  private final String nodeId;
  private final long deadGraceMs;
  private final PeerSyncStats stats;

  /** Each sender's stream in order. */
  private final SenderStreams streams;

  private final LinkedHashSet<String> departed = new LinkedHashSet<>();
  private final List<SyncCodec.Envelope> early = new ArrayList<>();
  private volatile boolean recovering = true;
  private SelectionService service;
  private CatalogRepair catalogRepair;

  /**
   * @param requestDigest asks a peer (by node id) for a digest: one heard for the first time, or
   *     behind a skipped gap
   */
  StreamReceiver(
      Vertx vertx,
      String nodeId,
      PeerSyncOptions options,
      PeerSyncStats stats,
      Consumer<String> requestDigest) {
    this.nodeId = nodeId;
    this.deadGraceMs = options.deadGrace().toMillis();
    this.stats = stats;
    this.streams =
        new SenderStreams(
            vertx, options.gapTimeout(), PeerSync.HOLD_LIMIT, stats, this::apply, requestDigest);
  }

  /** Sets what received messages are applied to; before the stream consumer is registered. */
  void attach(SelectionService service, CatalogRepair catalogRepair) {
    this.service = service;
    this.catalogRepair = catalogRepair;
  }

  /** Whether the node is still recovering (stream messages are held, not applied). */
  boolean recovering() {
    return recovering;
  }

  /** Ends recovery: the messages held meanwhile are received now, in arrival order. */
  void recovered() {
    recovering = false;
    List<SyncCodec.Envelope> held = new ArrayList<>(early);
    early.clear();
    held.forEach(this::receive);
  }

  /** Stops the per-sender gap timers; held messages are dropped. */
  void close() {
    streams.close();
  }

  /** The stream consumer's handler. */
  void onStream(Message<Object> m) {
    if (nodeId.equals(m.headers().get(SyncAddresses.FROM_HEADER))) {
      return; // this node's own publication: dropped before parsing (it carries every booking's
      // hashes)
    }
    SyncCodec.Envelope e;
    try {
      e = SyncCodec.envelope(m.body());
    } catch (SyncCodec.UnknownVersion uv) {
      stats.unknownVersion.incrementAndGet();
      return;
    } catch (IOException | RuntimeException bad) {
      stats.malformed.incrementAndGet();
      return;
    }
    if (e.from().equals(nodeId)) {
      return;
    }
    stats.received.incrementAndGet();
    if (departed.contains(e.from())) {
      stats.fromDeparted.incrementAndGet();
      return;
    }
    if (recovering) {
      if (early.size() < PeerSync.HOLD_LIMIT) {
        early.add(e);
      } else {
        stats.gaps.incrementAndGet();
      }
      return;
    }
    receive(e);
  }

  /** Applies {@code e} in its sender's order ({@link SenderStreams}), unless its sender departed. */
  private void receive(SyncCodec.Envelope e) {
    if (departed.contains(e.from())) {
      stats.fromDeparted.incrementAndGet();
      return;
    }
    streams.receive(e);
  }

  private void apply(SyncCodec.Envelope e) {
    try {
      LoadEvent load = SyncCodec.load(e.kind(), e.body());
      if (load != null) {
        count(service.applyPeerLoad(e.from(), load));
        return;
      }
      if (e.kind().equals("digest")) {
        LoadDigest.Outcome o = service.reconcile(e.from(), SyncCodec.digest(e.body()));
        stats.digestsApplied.incrementAndGet();
        stats.corrections.addAndGet(o.added() + o.dropped() + o.prefillsCompleted());
        catalogRepair.check(e.from(), e.body());
        return;
      }
      CatalogSync.CatalogChange c = SyncCodec.catalog(e.kind(), e.body());
      if (c == null) {
        stats.malformed.incrementAndGet();
        return;
      }
      service
          .applyPeerCatalog(c)
          .whenComplete(
              (changed, err) -> {
                if (err != null) {
                  stats.catalogRefused.incrementAndGet();
                  LOG.warn("catalog change from {} refused: {}", e.from(), err.toString());
                } else {
                  count(changed);
                }
              });
    } catch (IOException | RuntimeException bad) {
      stats.malformed.incrementAndGet();
    }
  }

  private void count(boolean applied) {
    (applied ? stats.applied : stats.ignored).incrementAndGet();
  }

  /**
   * Releases the bookings of every peer out of {@code members} for the dead grace and marks it
   * departed; a departed peer that is a member again is heard again.
   */
  void checkMembership(Collection<String> members) {
    Set<String> live = new HashSet<>(members);
    // a member released after a partition and back after the merge keeps its node id: hear it again
    departed.removeIf(live::contains);
    long now = System.nanoTime() / 1_000_000;
    for (String id : streams.goneFor(live, now, deadGraceMs)) {
      departed.add(id);
      if (departed.size() > DEPARTED_LIMIT) {
        departed.remove(departed.iterator().next());
      }
      int n = service.releasePeer(id);
      stats.peersReleased.incrementAndGet();
      stats.bookingsReleased.addAndGet(n);
      LOG.info("peer {} left the cluster: released its {} booking(s)", id, n);
    }
  }
}
