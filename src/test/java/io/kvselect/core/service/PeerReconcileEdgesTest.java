package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadDigest;
import io.kvselect.core.load.LoadEvent;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A peer's digest and steps at their edges: bookings of partitions this node does not have, on
 * ranks it does not know, or moved to another rank; steps for a partition this node does not
 * have; and the peer id every entry point requires.
 */
class PeerReconcileEdgesTest {

  private static final String PEER = "node-a";
  private static final WorkerRank R1 = new WorkerRank(1, 0);
  private static final WorkerRank R2 = new WorkerRank(2, 0);
  private static final PartitionKey ELSEWHERE = new PartitionKey("other-model", null);

  private final ServiceFixture f = new ServiceFixture();
  private final SelectionService node = f.service(ServiceFixture.approximate(), null);

  private static LoadEvent.Booked booked(PartitionKey k, String id, WorkerRank r) {
    return new LoadEvent.Booked(k, id, r, new long[] {1, 2}, 8, 4, null, true, 8);
  }

  private Map<WorkerRank, Long> requests() {
    Map<WorkerRank, Long> out = new HashMap<>();
    for (PotentialLoad l : node.inspection().loads(null, null).get(0).loads()) {
      out.put(new WorkerRank(l.workerId(), l.dpRank()), (long) l.activeRequests());
    }
    return out;
  }

  private void twoWorkers() {
    join(node.upsertWorker(ServiceFixture.worker(1, 4)));
    join(node.upsertWorker(ServiceFixture.worker(2, 4)));
  }

  @Test
  void digestEntriesThisNodeCannotPlaceAreSkippedAndCounted() {
    twoWorkers();
    LoadDigest d =
        new LoadDigest(
            List.of(
                booked(P, "ok", R1),
                booked(P, "no-rank", new WorkerRank(1, 5)),
                booked(ELSEWHERE, "e1", R1),
                booked(ELSEWHERE, "e2", R2)));
    LoadDigest.Outcome o = node.reconcile(PEER, d);
    assertEquals(new LoadDigest.Outcome(1, 0, 0, 3), o);
    assertTrue(o.changedAnything());
    assertEquals(Map.of(R1, 1L, R2, 0L), requests());
  }

  @Test
  void aBookingTheDigestShowsOnAnotherRankIsDroppedAndBookedThere() {
    twoWorkers();
    assertTrue(node.applyPeerLoad(PEER, booked(P, "x", R1)));
    LoadDigest.Outcome o = node.reconcile(PEER, new LoadDigest(List.of(booked(P, "x", R2))));
    assertEquals(1, o.dropped(), "on the wrong rank");
    assertEquals(Map.of(R1, 0L, R2, 1L), requests(), "and admitted where the peer holds it: " + o);
  }

  @Test
  void anUnchangedDigestChangesNothing() {
    twoWorkers();
    node.applyPeerLoad(PEER, booked(P, "x", R1));
    LoadDigest.Outcome o = node.reconcile(PEER, new LoadDigest(List.of(booked(P, "x", R1))));
    assertEquals(new LoadDigest.Outcome(0, 0, 0, 0), o);
    assertFalse(o.changedAnything());
  }

  @Test
  void stepsForAPartitionThisNodeDoesNotHaveChangeNothing() {
    twoWorkers();
    assertFalse(node.applyPeerLoad(PEER, booked(ELSEWHERE, "x", R1)));
    assertFalse(node.applyPeerLoad(PEER, new LoadEvent.Freed(ELSEWHERE, "x")));
    assertFalse(node.applyPeerLoad(PEER, new LoadEvent.PrefillCompleted(ELSEWHERE, "x")));
    assertFalse(node.applyPeerLoad(PEER, new LoadEvent.PrefillCompleted(P, "never-booked")));
    assertEquals(Map.of(R1, 0L, R2, 0L), requests());
  }

  @Test
  void aPeersPrefillCompletionAppliesOnceAndOnlyToItsOwnBooking() {
    twoWorkers();
    node.applyPeerLoad(PEER, booked(P, "x", R1));
    assertFalse(
        node.applyPeerLoad("node-c", new LoadEvent.PrefillCompleted(P, "x")),
        "another origin's step");
    assertTrue(node.applyPeerLoad(PEER, new LoadEvent.PrefillCompleted(P, "x")));
    assertTrue(node.applyPeerLoad(PEER, new LoadEvent.Freed(P, "x")));
    assertFalse(node.applyPeerLoad(PEER, new LoadEvent.Freed(P, "x")), "a repeated free");
  }

  @Test
  void everyPeerEntryPointNeedsThePeersId() {
    twoWorkers();
    assertThrows(NullPointerException.class, () -> node.applyPeerLoad(null, booked(P, "x", R1)));
    assertThrows(NullPointerException.class, () -> node.reconcile(null, new LoadDigest(List.of())));
    assertThrows(NullPointerException.class, () -> node.releasePeer(null));
  }

  @Test
  void aPartitionWithoutAKnownBlockSizeContributesNothingToTheDigest() {
    assertEquals(0, node.loadDigest().bookings().size());
    twoWorkers();
    join(node.select(ServiceFixture.pinned("mine", 1, 0, 1, 2, 3, 4), true));
    assertEquals(
        List.of("mine"), node.loadDigest().bookings().stream().map(LoadEvent::requestId).toList());
  }
}
