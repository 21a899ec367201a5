package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static io.kvselect.core.service.ServiceFixture.pinned;
import static io.kvselect.core.service.ServiceFixture.req;
import static io.kvselect.core.service.ServiceFixture.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link SelectionService#setUnreachable}: the catalog owns the liveness lifecycle. A marked worker
 * gets no selections but keeps its bookings; clearing the mark, or registering the worker again,
 * makes it schedulable; a worker that is not schedulable for another reason is left alone.
 */
class WorkerLivenessServiceTest {

  private static final String REASON =
      "unreachable: no connection to the kv events endpoint tcp://e:1 of dp_rank 0"
          + " for more than 5 s";

  private final ServiceFixture fx = new ServiceFixture();
  private final SelectionService svc = fx.service(ServiceFixture.approximate(), null);

  @Test
  void aMarkedWorkerGetsNoSelectionsAndKeepsItsBookings() {
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(svc.select(pinned("booked", 1, 0, 1, 2, 3, 4), true));

    assertEquals(Lifecycle.UNSCHEDULABLE, join(svc.setUnreachable(1, REASON)).lifecycle());
    assertEquals(List.of(REASON), svc.worker(1).notSchedulableReasons());
    assertEquals(REASON, svc.unreachableReason(1));
    for (int i = 0; i < 20; i++) {
      assertEquals(
          2,
          join(svc.select(req(null, 10 * i, 10 * i + 1, 10 * i + 2, 10 * i + 3), false))
              .workerId());
    }
    assertEquals(1, svc.bookingCount(), "the booking on the unreachable worker was dropped");
    join(svc.prefillComplete("booked"));
    join(svc.free("booked"));

    assertEquals(Lifecycle.SCHEDULABLE, join(svc.setUnreachable(1, null)).lifecycle());
    assertNull(svc.unreachableReason(1));
    assertEquals(List.of(), svc.worker(1).notSchedulableReasons());
    assertEquals(1, join(svc.select(pinned(null, 1, 0, 5, 6, 7, 8), false)).workerId());
  }

  @Test
  void theLastWorkerMarkedMakesTheNodeUnready() {
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.setUnreachable(1, REASON));
    assertEquals(false, svc.ready().ready());
    SelectionException e =
        assertThrows(
            SelectionException.class, () -> join(svc.select(req(null, 1, 2, 3, 4), false)));
    assertEquals(ErrorCode.NOT_READY, e.code());
    join(svc.setUnreachable(1, null));
    assertEquals(true, svc.ready().ready());
  }

  @Test
  void aRegistrationClearsTheMark() {
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.setUnreachable(1, REASON));
    assertEquals(Lifecycle.SCHEDULABLE, join(svc.upsertWorker(worker(1, 4))).lifecycle());
    assertNull(svc.unreachableReason(1));
    join(svc.setUnreachable(1, REASON));
    join(svc.deleteWorker(1));
    assertNull(svc.unreachableReason(1));
    assertNull(join(svc.setUnreachable(1, REASON)), "an unknown worker has no record");
  }

  @Test
  void anIncompleteWorkerIsLeftAlone() {
    WorkerSpec incomplete = WorkerSpec.builder(3).blockSize(4).build();
    join(svc.upsertWorker(incomplete));
    assertEquals(Lifecycle.INCOMPLETE, join(svc.setUnreachable(3, REASON)).lifecycle());
    assertNull(svc.unreachableReason(3));
    assertEquals(List.of("endpoint is required"), svc.worker(3).notSchedulableReasons());
    assertEquals(Lifecycle.INCOMPLETE, join(svc.setUnreachable(3, null)).lifecycle());
  }
}
