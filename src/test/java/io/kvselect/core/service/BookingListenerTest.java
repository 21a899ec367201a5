package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.index.WorkerRank;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link SelectionService#addBookingListener}: one call per booking, whichever form booked it
 * (select-and-reserve, explicit reservation, replayed selection), none for a plain select or a
 * failed booking; a listener that throws cannot fail a booking.
 */
class BookingListenerTest {

  private static final int[] PROMPT = {1, 2, 3, 4, 5, 6, 7, 8, 9};

  private static <T> T join(java.util.concurrent.CompletionStage<T> s) {
    return s.toCompletableFuture().join();
  }

  @Test
  void oneCallPerBookingWithItsRankSessionAndOverlap() {
    ServiceFixture f = new ServiceFixture();
    SelectionService svc = f.service(ServiceFixture.approximate(), Duration.ofMinutes(5));
    List<BookingListener.Booked> seen = new CopyOnWriteArrayList<>();
    svc.addBookingListener(seen::add);
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));

    SelectRequest req = SelectRequest.of(P, PromptInput.tokens(PROMPT));
    join(
        svc.select(
            new SelectRequest(
                P,
                "a",
                PromptInput.tokens(PROMPT),
                null,
                null,
                "s-1",
                null,
                null,
                null,
                null,
                null,
                null,
                false),
            true));
    assertEquals(1, seen.size());
    BookingListener.Booked a = seen.get(0);
    assertEquals("a", a.selectionId());
    assertEquals(new WorkerRank(1, 0), a.rank());
    assertEquals("s-1", a.sessionId());
    assertEquals(9, a.islTokens());
    assertEquals(4, a.blockSize());
    assertEquals(0, a.overlapBlocks(), "nothing cached before the first booking");

    Selection b = join(svc.select(req.withSelectionId("b"), true));
    assertEquals(2, seen.size());
    assertNull(seen.get(1).sessionId());
    assertEquals(b.effectivePrefillTokens(), seen.get(1).effectivePrefillTokens());
    assertEquals(
        2, seen.get(1).overlapBlocks(), "the first booking's two full blocks are credited");

    join(svc.select(req.withSelectionId("c"), false));
    assertEquals(2, seen.size(), "a select books nothing");
    join(svc.reserve(ReservationRequest.replay(P, "c")));
    join(
        svc.reserve(
            new ReservationRequest(
                P, "d", 1L, 0, PromptInput.tokens(PROMPT), null, null, null, null)));
    assertEquals(
        List.of("a", "b", "c", "d"),
        seen.stream().map(BookingListener.Booked::selectionId).toList());

    assertThrows(CompletionException.class, () -> join(svc.select(req.withSelectionId("a"), true)));
    assertThrows(
        CompletionException.class,
        () ->
            join(
                svc.reserve(
                    new ReservationRequest(
                        P, "e", 9L, 0, PromptInput.tokens(PROMPT), null, null, null, null))));
    assertEquals(4, seen.size(), "failed bookings are not announced");
  }

  @Test
  void aThrowingListenerCannotFailABooking() {
    ServiceFixture f = new ServiceFixture();
    SelectionService svc = f.service(ServiceFixture.approximate(), null);
    List<String> after = new CopyOnWriteArrayList<>();
    svc.addBookingListener(
        b -> {
          throw new IllegalStateException("listener bug");
        });
    svc.addBookingListener(b -> after.add(b.selectionId()));
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    join(svc.select(SelectRequest.of(P, PromptInput.tokens(PROMPT)).withSelectionId("x"), true));
    assertEquals(1, svc.bookingCount());
    assertEquals(List.of("x"), after, "later listeners still hear of it");
  }
}
