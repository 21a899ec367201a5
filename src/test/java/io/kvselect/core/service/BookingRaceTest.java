package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.session.LocalSessionAffinity;
import io.kvselect.core.session.SessionAffinity;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A booking whose worker leaves while its session bind is still in flight (the cluster's session
 * table answers later): the commit finds its load row gone, so the booking fails with 503, gives
 * its lease back and leaves no reservation, no load and no claim behind.
 */
class BookingRaceTest {

  private final ServiceFixture f = new ServiceFixture();
  private final CompletableFuture<WorkerRank> held = new CompletableFuture<>();
  private final List<String> released = new CopyOnWriteArrayList<>();

  /** The first bind waits for {@link #held}; every lease release is recorded. */
  private final class HeldFirstBind implements SessionAffinity {
    private final SessionAffinity inner;
    private boolean first = true;

    HeldFirstBind(SessionAffinity inner) {
      this.inner = inner;
    }

    @Override
    public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
      return inner.lookup(partition, sessionId);
    }

    @Override
    public synchronized CompletionStage<WorkerRank> bindAndLease(
        String partition,
        String sessionId,
        WorkerRank expected,
        WorkerRank target,
        String leaseId) {
      if (first) {
        first = false;
        return held;
      }
      return inner.bindAndLease(partition, sessionId, expected, target, leaseId);
    }

    @Override
    public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
      released.add(sessionId + "/" + leaseId);
      return inner.releaseLease(partition, sessionId, leaseId);
    }

    @Override
    public CompletionStage<Integer> sweep() {
      return inner.sweep();
    }

    @Override
    public CompletionStage<Void> removeWorker(long workerId) {
      return inner.removeWorker(workerId);
    }

    @Override
    public int size() {
      return inner.size();
    }
  }

  private SelectionService service() {
    Duration ttl = Duration.ofMinutes(5);
    SelectionService svc =
        f.builder(ServiceFixture.approximate(), ttl)
            .sessionAffinity(c -> new HeldFirstBind(new LocalSessionAffinity(c, ttl)))
            .build();
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    join(svc.upsertWorker(ServiceFixture.worker(2, 4)));
    return svc;
  }

  private static SelectRequest onWorker(String id, long worker) {
    return new SelectRequest(
        P,
        id,
        PromptInput.tokens(1, 2, 3, 4, 5, 6, 7, 8),
        null,
        null,
        "S",
        null,
        null,
        new WorkerRank(worker, 0),
        null,
        null,
        null,
        false);
  }

  @Test
  void aWorkerLeavingWhileTheBindIsInFlightFailsTheBookingAndReleasesItsLease() throws Exception {
    SelectionService svc = service();
    CompletableFuture<Selection> st = svc.select(onWorker("a", 1), true).toCompletableFuture();
    assertFalse(st.isDone(), "waiting for the session table");
    join(svc.deleteWorker(1));
    assertEquals(List.of(), released, "a claim holds no lease yet");
    held.complete(new WorkerRank(1, 0));

    Throwable t = assertThrows(ExecutionException.class, () -> st.get(10, TimeUnit.SECONDS));
    SelectionException e = (SelectionException) SelectionException.unwrap(t);
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertTrue(
        e.getMessage().contains("worker 1 left while reservation a was being made"),
        e.getMessage());
    assertEquals(List.of("S/a"), released, "the lease the bind took is given back");
    assertEquals(0, svc.bookingCount());
    assertEquals(0, svc.inspection().loads(null, null).get(0).loads().get(0).activeRequests());
    assertEquals(
        ErrorCode.NOT_FOUND,
        assertThrows(SelectionException.class, () -> join(svc.free("a"))).code());

    Selection again = join(svc.select(onWorker("a", 2), true));
    assertTrue(again.booked(), "the id was given back");
    assertEquals(2, again.workerId());
  }
}
