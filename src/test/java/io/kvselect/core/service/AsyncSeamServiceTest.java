package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.approximate;
import static io.kvselect.core.service.ServiceFixture.join;
import static io.kvselect.core.service.ServiceFixture.session;
import static io.kvselect.core.service.ServiceFixture.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.session.LocalSessionAffinity;
import io.kvselect.core.session.SessionAffinity;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * The booking steps around the asynchronous session seam, with a scripted table: a bind that
 * completes later, a bind lost to a concurrent booking (once, twice), a bind that fails.
 */
class AsyncSeamServiceTest {

  private final MutableClock clock = new MutableClock();
  private final Scripted table =
      new Scripted(new LocalSessionAffinity(clock, Duration.ofSeconds(60)));

  private SelectionService service() {
    SelectionService svc =
        SelectionService.builder()
            .routerConfig(approximate())
            .clock(clock)
            .random(new java.util.SplittableRandom(7))
            .sessionAffinityTtl(Duration.ofSeconds(60))
            .sessionAffinity(c -> table)
            .build();
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    return svc;
  }

  private static List<PotentialLoad> loads(SelectionService svc) {
    return svc.inspection().loads(null, null).get(0).loads();
  }

  private static SelectRequest pinnedSession(String id, long worker, int... tokens) {
    return new SelectRequest(
        P,
        id,
        PromptInput.tokens(tokens),
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
  void aBookingWaitsForItsBindAndHoldsTheIdMeanwhile() {
    SelectionService svc = service();
    CompletableFuture<WorkerRank> later = new CompletableFuture<>();
    table.next.add((e, t) -> later);
    CompletableFuture<Selection> st =
        svc.select(pinnedSession("a", 1, 1, 2, 3, 4), true).toCompletableFuture();
    assertFalse(st.isDone());
    assertEquals(0, svc.bookingCount(), "a claim is not a booking");
    assertEquals(1, loads(svc).get(0).activeRequests(), "but the request is admitted");
    SelectionException dup =
        assertThrows(
            SelectionException.class,
            () -> join(svc.select(pinnedSession("a", 2, 1, 2, 3, 4), true)));
    assertEquals(ErrorCode.CONFLICT, dup.code());
    assertEquals(
        ErrorCode.NOT_FOUND,
        assertThrows(SelectionException.class, () -> join(svc.free("a"))).code());
    assertEquals(
        ErrorCode.NOT_FOUND,
        assertThrows(SelectionException.class, () -> join(svc.prefillComplete("a"))).code());
    later.complete(new WorkerRank(1, 0));
    assertTrue(join(st).booked());
    assertEquals(1, svc.bookingCount());
    join(svc.free("a"));
  }

  @Test
  void aLostBindIsUndoneAndTheChoiceMadeWithTheWinner() {
    SelectionService svc = service();
    table.next.add((e, t) -> CompletableFuture.completedFuture(other(t)));
    Selection s = join(svc.select(session("a", "S", 1, 2, 3, 4), true));
    WorkerRank first = table.targets.get(0);
    assertEquals(other(first).workerId(), s.workerId(), "the winner's binding is followed");
    assertEquals(List.of(first, other(first)), table.targets);
    assertEquals(
        0,
        loads(svc).get((int) first.workerId() - 1).activeRequests(),
        "the first admission was undone");
    assertEquals(1, loads(svc).get((int) other(first).workerId() - 1).activeRequests());
  }

  @Test
  void losingTwiceAnswersRetryAndLeavesNothing() {
    SelectionService svc = service();
    table.next.add((e, t) -> CompletableFuture.completedFuture(other(t)));
    table.next.add((e, t) -> CompletableFuture.completedFuture(other(t)));
    SelectionException e =
        assertThrows(
            SelectionException.class, () -> join(svc.select(session("a", "S", 1, 2, 3, 4), true)));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertEquals("session S is being bound by concurrent requests; retry", e.getMessage());
    assertEquals(0, svc.bookingCount());
    assertEquals(
        List.of(new PotentialLoad(1, 0, 0, 0, 0), new PotentialLoad(2, 0, 0, 0, 0)), loads(svc));
    assertEquals(
        1, join(svc.select(pinnedSession("a", 1, 1, 2, 3, 4), true)).workerId(), "the id is free");
  }

  @Test
  void aFailedBindFailsTheBookingAndUndoesTheAdmission() {
    SelectionService svc = service();
    SelectionException boom = SelectionException.notReady("session store unavailable");
    table.next.add((e, t) -> CompletableFuture.failedFuture(boom));
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> join(svc.select(pinnedSession("a", 1, 1, 2, 3, 4), true)));
    assertSame(boom, e);
    assertEquals(0, svc.bookingCount());
    assertEquals(0, loads(svc).get(0).activeRequests());
    assertEquals(1, join(svc.select(pinnedSession("a", 1, 1, 2, 3, 4), true)).workerId());
  }

  @Test
  void aReplayWhoseBindLosesIsRejectedAndConsumed() {
    SelectionService svc = service();
    join(svc.select(pinnedSession("p", 1, 1, 2, 3, 4), false));
    table.next.add((e, t) -> CompletableFuture.completedFuture(new WorkerRank(2, 0)));
    SelectionException e =
        assertThrows(
            SelectionException.class, () -> join(svc.reserve(ReservationRequest.replay(P, "p"))));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertEquals("session S moved to worker 2 after selection p", e.getMessage());
    assertEquals(0, svc.pendingSelections());
    assertEquals(0, svc.bookingCount());
    assertEquals(0, loads(svc).get(0).activeRequests(), "the admission was undone");
  }

  @Test
  void aReplayWhoseBindFailsKeepsTheEntry() {
    SelectionService svc = service();
    join(svc.select(pinnedSession("p", 1, 1, 2, 3, 4), false));
    table.next.add((e, t) -> CompletableFuture.failedFuture(SelectionException.notReady("down")));
    SelectionException e =
        assertThrows(
            SelectionException.class, () -> join(svc.reserve(ReservationRequest.replay(P, "p"))));
    assertEquals("down", e.getMessage());
    assertEquals(1, svc.pendingSelections(), "a failed booking keeps the cached selection");
    assertEquals(0, loads(svc).get(0).activeRequests());
    assertEquals(1, join(svc.reserve(ReservationRequest.replay(P, "p"))).workerId());
    assertEquals(0, svc.pendingSelections());
  }

  private static WorkerRank other(WorkerRank r) {
    return new WorkerRank(3 - r.workerId(), 0);
  }

  @Test
  void requestDefaultsAreEmpty() {
    SelectRequest r = SelectRequest.of(P, PromptInput.tokens(1));
    assertSame(RouterConfigOverride.NONE, r.override());
    assertEquals(java.util.Set.of(), r.requiredTaints());
    assertEquals(java.util.Map.of(), r.preferredTaints());
    assertSame(RouterConfigOverride.NONE, ReservationRequest.replay(P, "x").override());
    assertFalse(ReservationRequest.replay(P, "x").explicit());
  }

  /** A session table whose next binds follow a script; everything else is the local table. */
  private static final class Scripted implements SessionAffinity {
    interface Bind {
      CompletionStage<WorkerRank> apply(WorkerRank expected, WorkerRank target);
    }

    final Deque<Bind> next = new ArrayDeque<>();
    final List<WorkerRank> targets = new java.util.ArrayList<>();
    private final SessionAffinity inner;

    Scripted(SessionAffinity inner) {
      this.inner = inner;
    }

    @Override
    public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
      return inner.lookup(partition, sessionId);
    }

    @Override
    public CompletionStage<WorkerRank> bindAndLease(
        String partition,
        String sessionId,
        WorkerRank expected,
        WorkerRank target,
        String leaseId) {
      targets.add(target);
      Bind b = next.poll();
      return b != null
          ? b.apply(expected, target)
          : inner.bindAndLease(partition, sessionId, expected, target, leaseId);
    }

    @Override
    public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
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
}
