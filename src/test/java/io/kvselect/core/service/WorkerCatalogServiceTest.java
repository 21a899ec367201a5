package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.approximate;
import static io.kvselect.core.service.ServiceFixture.join;
import static io.kvselect.core.service.ServiceFixture.pinned;
import static io.kvselect.core.service.ServiceFixture.ranks;
import static io.kvselect.core.service.ServiceFixture.req;
import static io.kvselect.core.service.ServiceFixture.secs;
import static io.kvselect.core.service.ServiceFixture.session;
import static io.kvselect.core.service.ServiceFixture.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.CatalogListener;
import io.kvselect.core.catalog.CatalogSync.CatalogChange;
import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The worker catalog through the service: lifecycle, block-size rules, moves, deletes, listeners. */
class WorkerCatalogServiceTest {

  private final ServiceFixture f = new ServiceFixture();

  private static SelectionException failure(Runnable r) {
    return assertThrows(SelectionException.class, r::run);
  }

  private static List<PotentialLoad> loads(SelectionService svc) {
    List<PotentialLoad> out = new ArrayList<>();
    svc.inspection().loads(null, null).forEach(pl -> out.addAll(pl.loads()));
    return out;
  }

  @Test
  void deletingAWorkerWithLiveReservationsDropsBookingsLeasesAndLoad() {
    SelectionService svc = f.service(approximate(), secs(60));
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(
        svc.select(
            new SelectRequest(
                P,
                "a",
                io.kvselect.core.service.PromptInput.tokens(1, 2, 3, 4, 5, 6, 7, 8),
                null,
                null,
                "S",
                null,
                null,
                new WorkerRank(1, 0),
                null,
                null,
                null,
                false),
            true));
    join(svc.select(pinned("b", 1, 0, 9, 10, 11, 12), true));
    join(svc.select(pinned("c", 2, 0, 13, 14, 15, 16), true));
    assertEquals(3, svc.bookingCount());
    f.loadEvents.clear();

    WorkerRecord removed = join(svc.deleteWorker(1));
    assertEquals(Lifecycle.UNSCHEDULABLE, removed.lifecycle());
    assertEquals(1, removed.workerId());
    assertEquals(1, svc.bookingCount(), "both bookings on the deleted worker are dropped");
    assertEquals(
        List.of("default:default/S/a"),
        f.releases,
        "the session lease of the dropped booking is released");
    assertEquals(
        List.of(new PotentialLoad(2, 0, 4, 1, 1)), loads(svc), "the deleted worker's load is gone");
    assertNull(svc.worker(1));
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.free("a"))).code());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.free("b"))).code());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.prefillComplete("b"))).code());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.outputBlock("b", null))).code());
    assertEquals(1, ((CatalogChange.Removed) f.catalogChanges.get(2)).workerId());
    join(svc.free("c"));
    assertEquals(List.of(new LoadEvent.Freed(P, "c")), f.loadEvents);
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.deleteWorker(1))).code());
  }

  @Test
  void deletingTheLastWorkerRemovesThePartition() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.select(req("a", 1, 2, 3, 4), true));
    join(svc.deleteWorker(1));
    assertEquals(List.of(), svc.inspection().loads(null, null));
    assertEquals(List.of(), svc.inspection().dump());
    assertEquals(0, svc.bookingCount());
    SelectionException e = failure(() -> join(svc.select(req(null, 1, 2, 3, 4), false)));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertEquals("no schedulable workers are available", e.getMessage());
  }

  @Test
  void catalogChangesArePublishedAndAnswered() {
    SelectionService svc = f.service(approximate(), null);
    WorkerRecord r = join(svc.upsertWorker(worker(1, 4)));
    assertEquals(Lifecycle.SCHEDULABLE, r.lifecycle());
    assertEquals(worker(1, 4), r.spec());
    WorkerRecord patched =
        join(
            svc.patchWorker(
                1,
                s ->
                    WorkerSpec.builder(s.workerId())
                        .modelName("elsewhere")
                        .routingGroup("x")
                        .endpoint("http://new")
                        .blockSize(s.blockSize())
                        .build()));
    assertEquals("http://new", patched.spec().endpoint());
    assertEquals(P, patched.spec().partition(), "a patch never moves the worker");
    assertSame(patched, svc.worker(1));
    WorkerRecord gone = join(svc.deleteWorker(1));
    assertEquals("http://new", gone.spec().endpoint());
    assertEquals(
        List.of(worker(1, 4), patched.spec()),
        f.catalogChanges.subList(0, 2).stream()
            .map(c -> ((CatalogChange.Upserted) c).spec())
            .toList());
    assertEquals(1, ((CatalogChange.Removed) f.catalogChanges.get(2)).workerId());
    for (int i = 1; i < 3; i++) {
      assertTrue(
          f.catalogChanges.get(i).version().newerThan(f.catalogChanges.get(i - 1).version()),
          "each local change is stamped newer than the one before: " + f.catalogChanges);
    }
    assertEquals(
        io.kvselect.core.catalog.CatalogVersion.REMOVAL_TIE,
        f.catalogChanges.get(2).version().tie());
    SelectionException e = failure(() -> join(svc.patchWorker(1, s -> s)));
    assertEquals(ErrorCode.NOT_FOUND, e.code());
    assertEquals("worker 1 not found", e.getMessage());
    assertEquals(3, f.catalogChanges.size(), "a failed call publishes nothing");
  }

  @Test
  void listWorkersFiltersByModelAndGroup() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4).withPartition("a", "x")));
    join(svc.upsertWorker(worker(2, 4).withPartition("a", "y")));
    join(svc.upsertWorker(worker(3, 4).withPartition("b", "x")));
    assertEquals(List.of(1L, 2L, 3L), ids(svc.listWorkers(null, null)));
    assertEquals(List.of(1L, 2L), ids(svc.listWorkers("a", null)));
    assertEquals(List.of(1L, 3L), ids(svc.listWorkers(null, "x")));
    assertEquals(List.of(2L), ids(svc.listWorkers("a", "y")));
    assertEquals(List.of(), ids(svc.listWorkers("c", null)));
    assertEquals(2, svc.inspection().loads("a", null).size());
    assertEquals(
        List.of(new PartitionKey("a", "x"), new PartitionKey("b", "x")),
        svc.inspection().loads(null, "x").stream().map(PartitionLoads::partition).toList());
    assertEquals(
        List.of(new PartitionKey("a", "y")),
        svc.inspection().loads("a", "y").stream().map(PartitionLoads::partition).toList());
  }

  private static List<Long> ids(List<WorkerRecord> ws) {
    return ws.stream().map(WorkerRecord::workerId).toList();
  }

  @Test
  void readinessFollowsSchedulableWorkersAndShutdown() {
    SelectionService svc = f.service(ServiceFixture.events(), null);
    ReadyStatus none = svc.ready();
    assertFalse(none.ready());
    assertEquals(0, none.schedulableWorkers());
    WorkerRecord incomplete = join(svc.upsertWorker(worker(1, 4)));
    assertEquals(Lifecycle.INCOMPLETE, incomplete.lifecycle());
    assertEquals(
        List.of(
            "kv_events endpoint is required for dp_rank 0"
                + " (set kv_events_endpoint, or kv_events_endpoints for each rank)"),
        incomplete.notSchedulableReasons());
    assertFalse(svc.ready().ready(), "an incomplete worker does not make the service ready");
    assertEquals(1, svc.ready().workers().size());
    SelectionException e = failure(() -> join(svc.select(req(null, 1, 2, 3, 4), false)));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertEquals("no schedulable workers are available", e.getMessage());
    join(svc.upsertWorker(ServiceFixture.eventWorker(2, 4, 0, 1, null, null, null)));
    ReadyStatus ok = svc.ready();
    assertTrue(ok.ready());
    assertEquals(1, ok.schedulableWorkers());
    assertEquals(2, join(svc.select(req(null, 1, 2, 3, 4), false)).workerId());
    SelectionException other =
        failure(
            () ->
                join(
                    svc.select(
                        SelectRequest.of(
                            new PartitionKey("m", "g"), PromptInput.tokens(1, 2, 3, 4)),
                        false)));
    assertEquals("no schedulable workers for m:g", other.getMessage());
    svc.shutdown();
    assertFalse(svc.ready().ready());
    assertEquals(1, svc.ready().schedulableWorkers());
    SelectionException down = failure(() -> join(svc.select(req(null, 1, 2, 3, 4), false)));
    assertEquals(ErrorCode.NOT_READY, down.code());
    assertEquals("selection service is shutting down", down.getMessage());
  }

  @Test
  void aSecondWorkerMustMatchThePartitionBlockSize() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    WorkerRecord w2 = join(svc.upsertWorker(worker(2, 8)));
    assertEquals(Lifecycle.INCOMPLETE, w2.lifecycle());
    assertEquals(
        List.of(
            "reconciliation failed: block_size mismatch for default:default existing=4 requested=8"),
        w2.notSchedulableReasons());
    assertEquals(1, svc.ready().schedulableWorkers());
    assertEquals(
        List.of(new PotentialLoad(1, 0, 0, 0, 0)),
        loads(svc),
        "an incomplete member gets no load row");
    assertEquals(Lifecycle.SCHEDULABLE, join(svc.upsertWorker(worker(2, 4))).lifecycle());
  }

  @Test
  void theOnlyMemberMayChangeTheBlockSizeAndLosesItsBookings() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 8)));
    join(svc.select(req("a", 1, 2, 3, 4, 5, 6, 7, 8), true));
    WorkerRecord again = join(svc.upsertWorker(worker(1, 4)));
    assertEquals(Lifecycle.SCHEDULABLE, again.lifecycle());
    assertEquals(1, svc.bookingCount(), "an unchanged re-registration keeps the booking");
    assertEquals(2, svc.inspection().dump().get(0).blocks().size());

    WorkerRecord resized = join(svc.upsertWorker(worker(1, 8)));
    assertEquals(
        Lifecycle.SCHEDULABLE,
        resized.lifecycle(),
        "the only schedulable member sets the block size");
    assertEquals(0, svc.bookingCount(), "hashes of the old size are useless: the bookings go");
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.free("a"))).code());
    assertEquals(8, svc.inspection().dump().get(0).blockSize());
    assertEquals(List.of(), svc.inspection().dump().get(0).blocks());
    assertEquals(8, join(svc.select(req(null, 1, 2, 3, 4, 5, 6, 7, 8), false)).blockSize());
    assertEquals(
        Lifecycle.SCHEDULABLE,
        join(svc.upsertWorker(worker(2, 8))).lifecycle(),
        "the other worker now matches");
  }

  @Test
  void aMemberThatNoLongerMatchesBecomesIncompleteAndLosesItsBookings() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(svc.select(pinned("a", 1, 0, 1, 2, 3, 4), true));
    join(svc.select(pinned("b", 2, 0, 1, 2, 3, 4), true));
    WorkerRecord w1 = join(svc.upsertWorker(worker(1, 8)));
    assertEquals(Lifecycle.INCOMPLETE, w1.lifecycle());
    assertEquals(1, svc.bookingCount());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.free("a"))).code());
    join(svc.free("b"));
    assertEquals(List.of(new PotentialLoad(2, 0, 0, 0, 0)), loads(svc));
  }

  @Test
  void shrinkingTheRanksDropsOnlyTheBookingsOfRemovedRanks() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(ranks(1, 4, 0, 2)));
    join(svc.select(pinned("r0", 1, 0, 1, 2, 3, 4), true));
    join(svc.select(pinned("r1", 1, 1, 1, 2, 3, 4), true));
    join(svc.upsertWorker(ranks(1, 4, 0, 1)));
    assertEquals(1, svc.bookingCount());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.free("r1"))).code());
    join(svc.free("r0"));
    assertEquals(List.of(new PotentialLoad(1, 0, 0, 0, 0)), loads(svc));
  }

  @Test
  void movingAWorkerToAnotherPartitionDrainsItFromTheOldOne() {
    SelectionService svc = f.service(approximate(), secs(60));
    List<String> seen = new ArrayList<>();
    svc.addCatalogListener(
        new CatalogListener() {
          @Override
          public void workerUpserted(WorkerRecord previous, WorkerRecord current) {
            seen.add(
                "up "
                    + (previous == null ? "-" : previous.spec().partition())
                    + " -> "
                    + current.spec().partition());
          }

          @Override
          public void workerRemoved(WorkerRecord removed) {
            seen.add("removed " + removed.spec().partition());
          }
        });
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.select(session("a", "S", 1, 2, 3, 4), true));
    join(svc.upsertWorker(worker(1, 4).withPartition("m2", null)));
    assertEquals(
        List.of(
            "up - -> default:default",
            "up default:default -> default:default",
            "removed default:default",
            "up - -> m2:default"),
        seen);
    assertEquals(0, svc.bookingCount());
    assertEquals(List.of("default:default/S/a"), f.releases);
    assertEquals(
        List.of(new PartitionKey("m2", "default")),
        svc.inspection().loads(null, null).stream().map(PartitionLoads::partition).toList(),
        "the emptied partition is gone");
    assertEquals(
        1,
        join(svc.select(
                SelectRequest.of(new PartitionKey("m2", null), PromptInput.tokens(1, 2, 3, 4)),
                false))
            .workerId());
  }

  @Test
  void aFailingListenerRollsTheRegistrationBack() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.select(req("a", 1, 2, 3, 4), true));
    List<String> restored = new ArrayList<>();
    svc.addCatalogListener(
        new CatalogListener() {
          @Override
          public void workerUpserted(WorkerRecord previous, WorkerRecord current) {
            if (current.spec().endpoint().startsWith("http://bad")) {
              throw new IllegalStateException("listener failed");
            }
            restored.add(current.spec().endpoint());
          }
        });
    WorkerSpec bad = WorkerSpec.builder(2).endpoint("http://bad").blockSize(4).build();
    assertThrows(IllegalStateException.class, () -> join(svc.upsertWorker(bad)));
    assertNull(svc.worker(2), "a new worker is removed again");
    assertEquals(1, svc.ready().schedulableWorkers());

    WorkerSpec badReplace = WorkerSpec.builder(1).endpoint("http://bad1").blockSize(4).build();
    assertThrows(IllegalStateException.class, () -> join(svc.upsertWorker(badReplace)));
    assertEquals(
        "http://w1", svc.worker(1).spec().endpoint(), "the previous registration is restored");
    assertEquals(List.of("http://w1"), restored, "and the listeners are told");
    assertEquals(1, svc.bookingCount(), "the booking survives the failed replace");
    assertEquals(1, f.catalogChanges.size(), "a failed upsert publishes nothing");
  }

  @Test
  void eventIndexIsThePartitionsIndexInEventModeOnly() {
    SelectionService approx = f.service(approximate(), null);
    join(approx.upsertWorker(worker(1, 4)));
    assertNull(approx.eventIndex(P));
    assertEquals(-1, approx.restoreIndex(P, 4, List.of()));

    SelectionService svc = new ServiceFixture().service(ServiceFixture.events(), null);
    assertNull(svc.eventIndex(P));
    join(svc.upsertWorker(ServiceFixture.eventWorker(1, 4, 0, 1, null, null, null)));
    assertNotNull(svc.eventIndex(P));
  }

  @Test
  void restoredIndexEntriesCountAndMatch() {
    SelectionService svc = f.service(ServiceFixture.events(), null);
    int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};
    long[] local =
        BlockHasher.localBlockHashes(
            tokens, tokens.length, 4, BlockHasher.saltSeed(null, null), false, null);
    WorkerRank r = new WorkerRank(1, 0);
    List<StoredBlock> blocks =
        List.of(
            new StoredBlock(r, StorageTier.DEVICE, false, 0, 100, local[0]),
            new StoredBlock(r, StorageTier.DEVICE, true, 100, 101, local[1]),
            new StoredBlock(r, StorageTier.DEVICE, true, 999, 102, local[1]));
    assertEquals(
        2, svc.restoreIndex(P, 4, blocks), "an entry with an unknown parent is not stored");
    assertEquals(-1, svc.restoreIndex(P, 8, blocks), "another block size is refused");
    assertEquals(2, svc.inspection().indexSize());
    join(svc.upsertWorker(ServiceFixture.eventWorker(1, 4, 0, 1, null, null, null)));
    join(svc.upsertWorker(ServiceFixture.eventWorker(2, 4, 0, 1, null, null, null)));
    OverlapReport o =
        svc.inspection().overlapScores(SelectRequest.of(P, PromptInput.tokens(tokens)));
    assertEquals(2, o.workers().get(0).deviceBlocks());
    assertEquals(0, o.workers().get(1).deviceBlocks());
    assertEquals(
        1, join(svc.select(req(null, tokens), false)).workerId(), "the cached worker wins");
    assertEquals(blocks.subList(0, 2), svc.inspection().dump().get(0).blocks());
    assertEquals(-1, svc.restoreIndex(P, 8, List.of()));
  }

  @Test
  void restoreIntoAFreshPartitionAdoptsTheDumpsBlockSize() {
    SelectionService svc = f.service(ServiceFixture.events(), null);
    assertEquals(0, svc.restoreIndex(P, 16, List.of()));
    assertEquals(16, svc.inspection().dump().get(0).blockSize());
    assertEquals(0, svc.restoreIndex(P, 16, List.of()), "the same size is accepted again");
    WorkerRecord w =
        join(svc.upsertWorker(ServiceFixture.eventWorker(1, 4, 0, 1, null, null, null)));
    assertEquals(Lifecycle.INCOMPLETE, w.lifecycle(), "the recovered block size binds new workers");
    assertEquals(
        List.of(
            "reconciliation failed: block_size mismatch for default:default existing=16 requested=4"),
        w.notSchedulableReasons());
  }
}
