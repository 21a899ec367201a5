package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadDigest;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.queue.QueueConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What a node does with its peers' load and catalog: applies their steps without republishing,
 * serves its router queue on a remote free or prefill completion, reconciles against a digest,
 * releases a dead peer's bookings, and applies catalog changes from peers.
 */
class PeerSyncServiceTest {

  private static final String PEER = "node-a";
  private static final WorkerRank R1 = new WorkerRank(1, 0);
  private static final WorkerRank R2 = new WorkerRank(2, 0);

  private final ServiceFixture fa = new ServiceFixture();
  private final ServiceFixture fb = new ServiceFixture();

  /** Two nodes (approximate mode) with the same two workers; b's recorders see what b publishes. */
  private SelectionService nodeA;

  private SelectionService nodeB;

  private void twoNodes(String... env) {
    nodeA = fa.service(ServiceFixture.approximate(env), null);
    nodeB = fb.service(ServiceFixture.approximate(env), null);
    for (SelectionService s : List.of(nodeA, nodeB)) {
      join(s.upsertWorker(ServiceFixture.worker(1, 4)));
      join(s.upsertWorker(ServiceFixture.worker(2, 4)));
    }
    fa.loadEvents.clear();
    fb.loadEvents.clear();
    fb.catalogChanges.clear();
  }

  private static Map<WorkerRank, Long> requests(SelectionService s) {
    Map<WorkerRank, Long> out = new HashMap<>();
    for (PotentialLoad l : s.inspection().loads(null, null).get(0).loads()) {
      out.put(new WorkerRank(l.workerId(), l.dpRank()), (long) l.activeRequests());
    }
    return out;
  }

  private static long prefill(SelectionService s, WorkerRank r) {
    return s.inspection().loads(null, null).get(0).loads().stream()
        .filter(l -> l.workerId() == r.workerId() && l.dpRank() == r.dpRank())
        .findFirst()
        .orElseThrow()
        .potentialPrefillTokens();
  }

  private static SelectRequest pinned(String id, long worker) {
    return ServiceFixture.pinned(id, worker, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
  }

  /** Forwards everything a has published so far to b, as the transport would. */
  private void forwardAtoB() {
    for (LoadEvent e : fa.loadEvents) {
      nodeB.applyPeerLoad(PEER, e);
    }
    fa.loadEvents.clear();
  }

  @Test
  void peerStepsApplyWithoutRepublishingAndTouchOnlyThatOrigin() {
    twoNodes();
    join(nodeA.select(pinned("x", 1), true));
    assertEquals(1, fa.loadEvents.size());
    forwardAtoB();
    assertEquals(1L, requests(nodeB).get(R1));
    assertTrue(prefill(nodeB, R1) > 0);
    assertTrue(fb.loadEvents.isEmpty(), "b republished a peer's booking");
    assertEquals(0, nodeB.bookingCount(), "a peer's booking is not in b's reservation index");

    LoadEvent.Booked booked = (LoadEvent.Booked) nodeA.loadDigest().bookings().get(0);
    assertFalse(nodeB.applyPeerLoad(PEER, booked), "a repeated booking is ignored");
    assertFalse(
        nodeB.applyPeerLoad("node-c", new LoadEvent.Freed(P, "x")),
        "another origin cannot free it");
    assertEquals(1L, requests(nodeB).get(R1));

    join(nodeA.prefillComplete("x"));
    forwardAtoB();
    assertEquals(0, prefill(nodeB, R1));
    assertEquals(1L, requests(nodeB).get(R1));
    join(nodeA.free("x"));
    forwardAtoB();
    assertEquals(0L, requests(nodeB).get(R1));
    assertTrue(fb.loadEvents.isEmpty());
  }

  @Test
  void aPeerCannotFreeThisNodesBookingAndUnknownRanksAreDropped() {
    twoNodes();
    join(nodeB.select(pinned("mine", 2), true));
    assertFalse(nodeB.applyPeerLoad(PEER, new LoadEvent.Freed(P, "mine")));
    assertEquals(1L, requests(nodeB).get(R2));
    assertEquals(1, nodeB.bookingCount());

    LoadEvent.Booked unknownRank =
        new LoadEvent.Booked(P, "y", new WorkerRank(9, 0), new long[] {1}, 4, 4, null, false, 0);
    assertFalse(nodeB.applyPeerLoad(PEER, unknownRank));
    LoadEvent.Booked otherBlockSize =
        new LoadEvent.Booked(P, "z", R1, new long[] {1}, 8, 8, null, false, 0);
    assertFalse(nodeB.applyPeerLoad(PEER, otherBlockSize));
    LoadEvent.Booked sameIdAsMine =
        new LoadEvent.Booked(P, "mine", R1, new long[] {1}, 4, 4, null, false, 0);
    assertFalse(nodeB.applyPeerLoad(PEER, sameIdAsMine));
    assertEquals(0L, requests(nodeB).get(R1));
  }

  /** A node whose single worker is busy queues requests; a peer's step must serve them. */
  private SelectionService queueingNode(ServiceFixture f) {
    RouterConfig cfg =
        RouterConfigLoader.fromEnv(
            RouterConfig.DEFAULTS,
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "1.0"));
    SelectionService s =
        f.builder(cfg, null)
            .queue(QueueConfig.defaults(cfg.queue().policy()), Duration.ofMinutes(5))
            .build();
    join(
        s.upsertWorker(
            WorkerSpec.builder(1)
                .endpoint("http://w1")
                .blockSize(4)
                .maxNumBatchedTokens(16L)
                .build()));
    return s;
  }

  private static long[] hashes(int n) {
    long[] h = new long[n];
    for (int i = 0; i < n; i++) {
      h[i] = 1000 + i;
    }
    return h;
  }

  /** The parked request's selection; it is served synchronously by the step that freed capacity. */
  private static Selection served(CompletionStage<Selection> parked) {
    assertTrue(parked.toCompletableFuture().isDone(), "the parked request was not served");
    return join(parked);
  }

  @Test
  void aRemoteFreeServesAParkedRequestLikeALocalOne() {
    SelectionService b = queueingNode(fb);
    assertTrue(
        b.applyPeerLoad(
            PEER, new LoadEvent.Booked(P, "remote", R1, hashes(8), 32, 4, null, true, 32)));
    CompletionStage<Selection> parked = b.select(ServiceFixture.req("local", new int[32]), true);
    assertFalse(
        parked.toCompletableFuture().isDone(), "the worker is busy with the peer's prefill");
    assertEquals(1, b.inspection().loads(null, null).get(0).pendingCount());

    assertTrue(b.applyPeerLoad(PEER, new LoadEvent.Freed(P, "remote")));
    Selection s = served(parked);
    assertEquals(1, s.workerId());
    assertEquals(0, b.inspection().loads(null, null).get(0).pendingCount());
    assertEquals(
        List.of("local"),
        fb.loadEvents.stream().map(LoadEvent::requestId).toList(),
        "only the local booking is published");
  }

  @Test
  void aRemotePrefillCompletionServesAParkedRequest() {
    SelectionService b = queueingNode(fb);
    b.applyPeerLoad(PEER, new LoadEvent.Booked(P, "remote", R1, hashes(8), 32, 4, null, true, 32));
    CompletionStage<Selection> parked = b.select(ServiceFixture.req("local", new int[32]), true);
    assertFalse(parked.toCompletableFuture().isDone());
    assertTrue(b.applyPeerLoad(PEER, new LoadEvent.PrefillCompleted(P, "remote")));
    assertEquals(1, served(parked).workerId());
  }

  @Test
  void aDigestCarriesCommittedBookingsWithTheirPrefillState() {
    twoNodes();
    join(nodeA.select(pinned("p1", 1), true));
    join(nodeA.select(pinned("p2", 2), true));
    join(nodeA.prefillComplete("p2"));
    nodeA.applyPeerLoad(
        "node-c", new LoadEvent.Booked(P, "theirs", R1, new long[] {5}, 4, 4, null, false, 0));
    join(nodeA.select(ServiceFixture.req("cached", 1, 2, 3, 4), false));

    LoadDigest d = nodeA.loadDigest();
    Map<String, LoadEvent.Booked> byId =
        d.bookings().stream().collect(Collectors.toMap(LoadEvent.Booked::requestId, b -> b));
    assertEquals(Set.of("p1", "p2"), byId.keySet(), "only this node's committed bookings");
    assertTrue(byId.get("p1").trackPrefill() && byId.get("p1").prefillTokens() > 0);
    assertEquals(0, byId.get("p2").prefillTokens());
    assertEquals(R2, byId.get("p2").rank());
    assertEquals(4, byId.get("p2").blockSize());
    assertEquals(12, byId.get("p2").isl());
  }

  @Test
  void reconcileDropsWhatThePeerNoLongerHoldsAndAddsWhatIsMissing() {
    twoNodes();
    join(nodeA.select(pinned("kept", 1), true));
    join(nodeA.select(pinned("lost-free", 2), true));
    forwardAtoB();
    join(nodeA.free("lost-free"));
    join(nodeA.select(pinned("lost-booking", 2), true));
    join(nodeA.prefillComplete("kept"));
    fa.loadEvents.clear();
    join(nodeB.select(pinned("bs-own", 2), true));
    nodeB.applyPeerLoad(
        "node-c", new LoadEvent.Booked(P, "third", R2, new long[] {7}, 4, 4, null, false, 0));
    assertEquals(Map.of(R1, 1L, R2, 3L), requests(nodeB));
    assertTrue(prefill(nodeB, R1) > 0);

    LoadDigest.Outcome o = nodeB.reconcile(PEER, nodeA.loadDigest());
    assertEquals(new LoadDigest.Outcome(1, 1, 1, 0), o);
    assertEquals(
        Map.of(R1, 1L, R2, 3L), requests(nodeB), "lost-free out, lost-booking in, others kept");
    assertEquals(0, prefill(nodeB, R1));
    assertEquals(1, nodeB.bookingCount());
    assertFalse(
        nodeB.reconcile(PEER, nodeA.loadDigest()).changedAnything(),
        "a second digest changes nothing");

    assertEquals(
        new LoadDigest.Outcome(0, 2, 0, 0), nodeB.reconcile(PEER, new LoadDigest(List.of())));
    assertEquals(Map.of(R1, 0L, R2, 2L), requests(nodeB));
    assertTrue(fb.loadEvents.stream().allMatch(e -> e.requestId().equals("bs-own")));
  }

  @Test
  void reconcileServesTheRouterQueue() {
    SelectionService b = queueingNode(fb);
    b.applyPeerLoad(PEER, new LoadEvent.Booked(P, "gone", R1, hashes(8), 32, 4, null, true, 32));
    CompletionStage<Selection> parked = b.select(ServiceFixture.req("local", new int[32]), true);
    assertFalse(parked.toCompletableFuture().isDone());
    b.reconcile(PEER, new LoadDigest(List.of()));
    assertEquals(1, served(parked).workerId());
  }

  @Test
  void releasingADeadPeerFreesExactlyItsBookings() {
    twoNodes();
    join(nodeA.select(pinned("a1", 1), true));
    join(nodeA.select(pinned("a2", 2), true));
    forwardAtoB();
    join(nodeB.select(pinned("b1", 1), true));
    nodeB.applyPeerLoad(
        "node-c", new LoadEvent.Booked(P, "c1", R2, new long[] {7}, 4, 4, null, false, 0));
    assertEquals(Map.of(R1, 2L, R2, 2L), requests(nodeB));

    assertEquals(2, nodeB.releasePeer(PEER));
    assertEquals(Map.of(R1, 1L, R2, 1L), requests(nodeB));
    assertEquals(0, nodeB.releasePeer(PEER));
    assertEquals(1, nodeB.releasePeer("node-c"));
    assertEquals(1, nodeB.bookingCount());
  }

  @Test
  void expiryOnlyPublishesThisNodesFrees() {
    twoNodes();
    join(nodeA.select(pinned("a1", 1), true));
    forwardAtoB();
    join(nodeB.select(pinned("b1", 2), true));
    fb.loadEvents.clear();
    fb.clock.advance(Duration.ofSeconds(301));
    assertEquals(2, nodeB.expire());
    assertEquals(List.of(new LoadEvent.Freed(P, "b1")), fb.loadEvents);
  }

  @Test
  void peerCatalogChangesApplyWithoutRepublishing() {
    twoNodes();
    WorkerSpec w3 = ServiceFixture.worker(3, 4);
    assertTrue(join(nodeB.applyPeerCatalog(new CatalogSync.CatalogChange.Upserted(w3))));
    assertTrue(nodeB.worker(3).schedulable());
    assertEquals(3, nodeB.listWorkers(null, null).size());
    assertFalse(
        join(nodeB.applyPeerCatalog(new CatalogSync.CatalogChange.Upserted(w3))),
        "same spec: no change");
    Selection s = join(nodeB.select(ServiceFixture.pinned("on3", 3, 0, 1, 2, 3, 4), true));
    assertEquals(3, s.workerId());
    nodeB.applyPeerLoad(
        PEER,
        new LoadEvent.Booked(
            P, "peer-on-3", new WorkerRank(3, 0), new long[] {1}, 4, 4, null, false, 0));

    assertTrue(join(nodeB.applyPeerCatalog(new CatalogSync.CatalogChange.Removed(3))));
    assertThrows(
        SelectionException.class,
        () -> join(nodeB.free("on3")),
        "the booking left with its worker");
    assertEquals(0, nodeB.bookingCount());
    assertFalse(
        join(nodeB.applyPeerCatalog(new CatalogSync.CatalogChange.Removed(3))),
        "unknown worker: no change");
    assertTrue(fb.catalogChanges.isEmpty(), "b republished a peer's catalog change");
    assertEquals(2, nodeB.listWorkers(null, null).size());
  }
}
