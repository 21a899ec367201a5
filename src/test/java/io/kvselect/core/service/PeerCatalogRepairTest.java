package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.CatalogSync.CatalogChange;
import io.kvselect.core.catalog.CatalogVersion;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.index.WorkerRank;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Catalog repair between two nodes through the embedded API: a node's {@code catalogState}
 * applied on a peer gives it the same workers and the same {@code catalogDigest}; a change older
 * than what the peer holds (live or removed) changes nothing; an unchanged spec or the removal of
 * an unknown worker still records the version; a peer's removal drops the worker's bookings and
 * session bindings; a peer's new worker serves the router queue.
 */
class PeerCatalogRepairTest {

  private final ServiceFixture fa = new ServiceFixture();
  private final ServiceFixture fb = new ServiceFixture();
  private final SelectionService nodeA =
      fa.service(ServiceFixture.approximate(), Duration.ofMinutes(10));
  private final SelectionService nodeB =
      fb.service(ServiceFixture.approximate(), Duration.ofMinutes(10));

  private static Set<Long> workerIds(SelectionService s) {
    return s.listWorkers(null, null).stream().map(w -> w.workerId()).collect(Collectors.toSet());
  }

  /** Applies every change of {@code from}'s catalog state on {@code to}; returns how many changed it. */
  private static int repair(SelectionService from, SelectionService to) {
    int changed = 0;
    for (CatalogChange c : from.catalogState()) {
      if (join(to.applyPeerCatalog(c))) {
        changed++;
      }
    }
    return changed;
  }

  private CatalogChange last(ServiceFixture f) {
    return f.catalogChanges.get(f.catalogChanges.size() - 1);
  }

  @Test
  void catalogStateRebuildsThePeersCatalogAndDigest() {
    long empty = nodeB.catalogDigest();
    join(nodeA.upsertWorker(ServiceFixture.worker(1, 4)));
    join(nodeA.upsertWorker(ServiceFixture.worker(2, 4)));
    join(nodeA.upsertWorker(ServiceFixture.ranks(3, 4, 0, 2)));
    join(nodeA.patchWorker(1, s -> WorkerSpec.of(1, "http://w1-moved", 4)));
    fa.clock.advance(Duration.ofMillis(5));
    join(nodeA.deleteWorker(2));
    assertNotEquals(empty, nodeA.catalogDigest(), "a catalog with workers hashes apart from none");
    assertEquals(empty, nodeB.catalogDigest(), "an empty node's digest does not move by itself");

    List<CatalogChange> state = nodeA.catalogState();
    assertEquals(3, state.size(), "an upsert per live worker and the remembered removal");
    assertTrue(
        state.stream().anyMatch(c -> c instanceof CatalogChange.Removed && c.workerId() == 2),
        "the removal of worker 2 is part of the state");
    assertTrue(
        state.stream()
            .filter(c -> c instanceof CatalogChange.Upserted)
            .allMatch(c -> c.version().compareTo(CatalogVersion.ZERO) > 0),
        "every live worker is sent at the version it was stamped with");

    assertEquals(2, repair(nodeA, nodeB), "workers 1 and 3 are new to b; 2 was never there");
    assertEquals(Set.of(1L, 3L), workerIds(nodeB));
    assertEquals("http://w1-moved", nodeB.worker(1).spec().endpoint());
    assertEquals(nodeA.catalogDigest(), nodeB.catalogDigest(), "b now holds a's versions");
    assertTrue(fb.catalogChanges.isEmpty(), "a repair is not republished");

    assertEquals(0, repair(nodeA, nodeB), "a second repair finds nothing to change");
    assertEquals(nodeA.catalogDigest(), nodeB.catalogDigest());
  }

  @Test
  void anOlderChangeIsRefusedLiveOrRemoved() {
    join(nodeA.upsertWorker(ServiceFixture.worker(1, 4)));
    CatalogChange first = last(fa);
    fa.clock.advance(Duration.ofMillis(5));
    join(nodeA.patchWorker(1, s -> WorkerSpec.of(1, "http://w1-new", 4)));
    CatalogChange second = last(fa);

    assertTrue(join(nodeB.applyPeerCatalog(second)));
    assertFalse(join(nodeB.applyPeerCatalog(first)), "the older upsert arrives late");
    assertEquals("http://w1-new", nodeB.worker(1).spec().endpoint());
    assertEquals(nodeA.catalogDigest(), nodeB.catalogDigest());

    fa.clock.advance(Duration.ofMillis(5));
    join(nodeA.deleteWorker(1));
    CatalogChange removal = last(fa);
    assertTrue(join(nodeB.applyPeerCatalog(removal)));
    assertNull(nodeB.worker(1));
    assertFalse(join(nodeB.applyPeerCatalog(second)), "an upsert older than the removal");
    assertNull(nodeB.worker(1), "the removed worker does not come back");
    assertEquals(nodeA.catalogDigest(), nodeB.catalogDigest());
  }

  @Test
  void anUnchangedSpecOrAnUnknownRemovalStillRecordsTheVersion() {
    WorkerSpec w1 = ServiceFixture.worker(1, 4);
    join(nodeA.upsertWorker(w1));
    assertTrue(join(nodeB.applyPeerCatalog(last(fa))));
    fa.clock.advance(Duration.ofMillis(5));
    join(nodeA.upsertWorker(w1));
    assertNotEquals(nodeA.catalogDigest(), nodeB.catalogDigest(), "a re-registration re-stamps");
    assertFalse(join(nodeB.applyPeerCatalog(last(fa))), "the same spec changes no worker");
    assertEquals(nodeA.catalogDigest(), nodeB.catalogDigest(), "but its version is recorded");

    join(nodeA.upsertWorker(ServiceFixture.worker(9, 4)));
    CatalogChange upsert9 = last(fa);
    fa.clock.advance(Duration.ofMillis(5));
    join(nodeA.deleteWorker(9));
    assertFalse(join(nodeB.applyPeerCatalog(last(fa))), "b never had worker 9");
    assertFalse(
        join(nodeB.applyPeerCatalog(upsert9)),
        "the remembered removal refuses the older upsert that arrives after it");
    assertNull(nodeB.worker(9));
    assertEquals(nodeA.catalogDigest(), nodeB.catalogDigest());
  }

  @Test
  void aPeersRemovalDropsTheWorkersBookingsAndSessionBindings() {
    join(nodeB.upsertWorker(ServiceFixture.worker(1, 4)));
    join(nodeA.upsertWorker(ServiceFixture.worker(2, 4)));
    assertTrue(join(nodeB.applyPeerCatalog(last(fa))));
    Selection s =
        join(
            nodeB.select(
                ServiceFixture.pinnedSession("on2", "chat-1", 2, 0, 1, 2, 3, 4, 5, 6, 7, 8), true));
    assertEquals(2, s.workerId());
    assertEquals(1, nodeB.bookingCount());
    CompletionStage<Optional<WorkerRank>> before =
        nodeB.sessionAffinity().lookup(ServiceFixture.P.toString(), "chat-1");
    assertEquals(Optional.of(new WorkerRank(2, 0)), join(before));

    fa.clock.advance(Duration.ofMillis(5));
    join(nodeA.deleteWorker(2));
    assertTrue(join(nodeB.applyPeerCatalog(last(fa))));
    assertEquals(0, nodeB.bookingCount(), "the booking left with its worker");
    assertTrue(
        fb.releases.contains(ServiceFixture.P + "/chat-1/on2"),
        "its session lease was released: " + fb.releases);
    assertEquals(
        Optional.empty(),
        join(nodeB.sessionAffinity().lookup(ServiceFixture.P.toString(), "chat-1")),
        "the session no longer points at the removed worker");
    assertEquals(Set.of(1L), workerIds(nodeB));
  }

  @Test
  void aPeersNewWorkerServesTheRouterQueue() {
    ServiceFixture fq = new ServiceFixture();
    SelectionService queued =
        fq.builder(
                ServiceFixture.approximate("DYN_ROUTER_QUEUE_THRESHOLD", "1.0"),
                Duration.ofMinutes(10))
            .queue(io.kvselect.core.queue.QueueConfig.defaults("fcfs"), Duration.ofMinutes(5))
            .build();
    join(queued.upsertWorker(ServiceFixture.capped(1, 16)));
    int[] t = new int[32];
    for (int i = 0; i < t.length; i++) {
      t[i] = i;
    }
    join(queued.select(ServiceFixture.req("first", t), true));
    int[] u = new int[32];
    for (int i = 0; i < u.length; i++) {
      u[i] = 100 + i;
    }
    CompletionStage<Selection> waiting = queued.select(ServiceFixture.req("second", u), true);
    assertFalse(waiting.toCompletableFuture().isDone(), "the only rank is busy: parked");

    join(nodeA.upsertWorker(ServiceFixture.capped(2, 16)));
    assertTrue(join(queued.applyPeerCatalog(last(fa))));
    assertTrue(waiting.toCompletableFuture().isDone(), "the peer's worker took the parked request");
    assertEquals(2, join(waiting).workerId());
  }

  @Test
  void aLocalRemovalIsRememberedInTheState() {
    join(nodeA.upsertWorker(ServiceFixture.worker(4, 4)));
    fa.clock.advance(Duration.ofMillis(5));
    join(nodeA.deleteWorker(4));
    List<CatalogChange> state = nodeA.catalogState();
    assertEquals(1, state.size());
    assertTrue(state.get(0) instanceof CatalogChange.Removed);
    assertEquals(4, state.get(0).workerId());
    assertEquals(last(fa).version(), state.get(0).version());
  }
}
