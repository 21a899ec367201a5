package io.kvselect.core.service;

import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.load.ActiveLoad;
import io.kvselect.core.load.LoadDigest;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.session.SessionAffinity;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What peers ask of this node: their bookings' lifecycle steps ({@link #apply}), their
 * reservation digests ({@link #reconcile}), their death ({@link #releasePeer}), their catalog
 * changes ({@link #applyCatalog}, with {@link #catalogDigest} / {@link #catalogState} to repair a
 * missed one), and the lifecycle steps they forward for bookings this node holds
 * ({@link #applyForwarded}). Nothing applied here is published or forwarded again (the origin
 * already told everyone).
 *
 * <p>A peer's booking lives only in the partition's {@link ActiveLoad}, tagged with the peer's
 * node id as origin; it has no row in this node's reservation index, so lifecycle calls for it
 * answer 404 here. A peer's step touches only requests of that origin, so a late or repeated
 * message can never free a booking of this node or of a third node.
 *
 * <p>State and owners: none of its own. The peers' bookings are rows of each partition's load,
 * owned by the partition's lock, which each step takes around its own load changes; catalog
 * changes go through the catalog writer ({@link WorkerRegistry}); forwarded steps run through
 * {@link ReservationLifecycle}. The router queue is drained after the lock is released, exactly
 * as after a local free. Called on the node's sync context.
 */
final class PeerEntryPoints {

  private final WorkerRegistry registry;
  private final Bookings bookings;
  private final SessionAffinity affinity;
  private final RouterQueueing queueing;
  private final ReservationLifecycle lifecycle;

  PeerEntryPoints(
      WorkerRegistry registry,
      Bookings bookings,
      SessionAffinity affinity,
      RouterQueueing queueing,
      ReservationLifecycle lifecycle) {
    this.registry = registry;
    this.bookings = bookings;
    this.affinity = affinity;
    this.queueing = queueing;
    this.lifecycle = lifecycle;
  }

  /** See {@link SelectionService#applyPeerLoad}. */
  boolean apply(String peerId, LoadEvent e) {
    Objects.requireNonNull(peerId, "peerId");
    Partition p = registry.partition(e.partition());
    if (p == null) {
      return false;
    }
    boolean applied;
    boolean freed;
    synchronized (p.lock) {
      if (e instanceof LoadEvent.Booked b) {
        applied = bookLocked(p, peerId, b);
        freed = false;
      } else if (e instanceof LoadEvent.PrefillCompleted c) {
        applied = ownedBy(p, peerId, c.requestId()) && p.load.markPrefillComplete(c.requestId());
        freed = applied;
      } else {
        applied = ownedBy(p, peerId, e.requestId()) && p.load.free(e.requestId());
        freed = applied;
      }
    }
    if (freed) {
      queueing.drain(p);
    }
    return applied;
  }

  private static boolean ownedBy(Partition p, String peerId, String id) {
    return p.load.isActive(id) && peerId.equals(p.load.originOf(id));
  }

  /**
   * Admits a peer's booking when its rank is schedulable here with the same block size and the
   * id is not active yet (a repeat of the same booking, or a clash with another origin, is
   * ignored). Caller holds {@code p.lock}.
   */
  private static boolean bookLocked(Partition p, String peerId, LoadEvent.Booked b) {
    Partition.Members m = p.members();
    WorkerRecord w = m.schedulableWorker(b.rank().workerId());
    if (w == null
        || !w.hasRank(b.rank().dpRank())
        || !Objects.equals(m.blockSize(), b.blockSize())
        || p.load.isActive(b.requestId())) {
      return false;
    }
    try {
      p.load.addRequest(
          b.requestId(),
          b.rank(),
          b.trackingHashes(),
          b.isl(),
          b.blockSize(),
          b.expectedOutputTokens(),
          b.trackPrefill(),
          b.prefillTokens(),
          peerId);
    } catch (RuntimeException bad) {
      return false;
    }
    return true;
  }

  /** See {@link SelectionService#loadDigest}. */
  LoadDigest digest() {
    List<LoadEvent.Booked> out = new ArrayList<>();
    for (Partition p : registry.partitions()) {
      synchronized (p.lock) {
        Integer bs = p.members().blockSize();
        if (bs == null) {
          continue;
        }
        for (ActiveLoad.RequestView r : p.load.requests(null)) {
          if (bookings.isBooked(r.requestId(), p.key)) {
            out.add(
                new LoadEvent.Booked(
                    p.key,
                    r.requestId(),
                    r.rank(),
                    r.sequenceHashes().clone(),
                    r.islTokens(),
                    bs,
                    r.expectedOutputTokens(),
                    r.prefillTokens() > 0,
                    r.prefillTokens()));
          }
        }
      }
    }
    return new LoadDigest(out);
  }

  /** See {@link SelectionService#reconcile}. */
  LoadDigest.Outcome reconcile(String peerId, LoadDigest digest) {
    Objects.requireNonNull(peerId, "peerId");
    Map<PartitionKey, Map<String, LoadEvent.Booked>> byPartition = new HashMap<>();
    for (LoadEvent.Booked b : digest.bookings()) {
      byPartition.computeIfAbsent(b.partition(), k -> new HashMap<>()).put(b.requestId(), b);
    }
    int added = 0;
    int dropped = 0;
    int completed = 0;
    int skipped = 0;
    for (Partition p : registry.partitions()) {
      Map<String, LoadEvent.Booked> held = byPartition.getOrDefault(p.key, Map.of());
      boolean gaveBack = false;
      synchronized (p.lock) {
        for (ActiveLoad.RequestView r : p.load.requests(peerId)) {
          LoadEvent.Booked b = held.get(r.requestId());
          if (b == null || !b.rank().equals(r.rank())) {
            p.load.free(r.requestId());
            dropped++;
            gaveBack = true;
          } else if (r.prefillTokens() > 0 && b.prefillTokens() == 0) {
            p.load.markPrefillComplete(r.requestId());
            completed++;
            gaveBack = true;
          }
        }
        for (LoadEvent.Booked b : held.values()) {
          if (!p.load.isActive(b.requestId())) {
            if (bookLocked(p, peerId, b)) {
              added++;
            } else {
              skipped++;
            }
          }
        }
      }
      if (gaveBack) {
        queueing.drain(p);
      }
    }
    for (Map.Entry<PartitionKey, Map<String, LoadEvent.Booked>> e : byPartition.entrySet()) {
      if (registry.partition(e.getKey()) == null) {
        skipped += e.getValue().size();
      }
    }
    return new LoadDigest.Outcome(added, dropped, completed, skipped);
  }

  /** See {@link SelectionService#releasePeer}. */
  int releasePeer(String peerId) {
    Objects.requireNonNull(peerId, "peerId");
    int n = 0;
    for (Partition p : registry.partitions()) {
      int freed;
      synchronized (p.lock) {
        freed = p.load.removeOrigin(peerId).size();
      }
      if (freed > 0) {
        n += freed;
        queueing.drain(p);
      }
    }
    return n;
  }

  /** See {@link SelectionService#applyPeerCatalog}. */
  CompletionStage<Boolean> applyCatalog(CatalogSync.CatalogChange change) {
    if (!registry.applyPeer(change, lifecycle.droppedBookings())) {
      return CompletableFuture.completedFuture(false);
    }
    queueing.drainAll(registry.partitions());
    if (change instanceof CatalogSync.CatalogChange.Removed && affinity != null) {
      return affinity.removeWorker(change.workerId()).thenApply(v -> true);
    }
    return CompletableFuture.completedFuture(true);
  }

  /** See {@link SelectionService#catalogDigest}. */
  long catalogDigest() {
    return registry.catalogDigest();
  }

  /** See {@link SelectionService#catalogState}. */
  List<CatalogSync.CatalogChange> catalogState() {
    return registry.catalogState();
  }

  /** See {@link SelectionService#applyForwarded}. */
  CompletionStage<Void> applyForwarded(LifecycleStep step) {
    if (step instanceof LifecycleStep.PrefillComplete c) {
      return lifecycle.prefillCompleteLocal(c.id());
    }
    if (step instanceof LifecycleStep.OutputBlock o) {
      return lifecycle.outputBlockLocal(o.id(), o.decayFraction());
    }
    return lifecycle.freeLocal(step.id());
  }
}
