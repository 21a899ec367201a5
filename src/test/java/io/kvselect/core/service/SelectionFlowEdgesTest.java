package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The selection flow's own checks and defaults: the range of {@code priority_jump} (a finite,
 * non-negative number of seconds below 10^12), a generated id for a booking that names none, and
 * a query that never books.
 */
class SelectionFlowEdgesTest {

  private final ServiceFixture f = new ServiceFixture();
  private final SelectionService svc =
      f.service(ServiceFixture.approximate(), Duration.ofMinutes(5));

  private static SelectRequest jump(String id, Double seconds) {
    return new SelectRequest(
        P,
        id,
        PromptInput.tokens(1, 2, 3, 4),
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        false,
        null,
        seconds,
        null);
  }

  @Test
  void priorityJumpIsANonNegativeFiniteNumberBelowATrillionSeconds() {
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    assertTrue(join(svc.select(jump("zero", 0.0), true)).booked());
    assertTrue(join(svc.select(jump("large", 999_999_999_999.0), true)).booked());
    for (double bad : new double[] {1e12, Double.NaN, Double.POSITIVE_INFINITY, -1e-9}) {
      SelectionException e =
          assertThrows(
              SelectionException.class,
              () -> join(svc.select(jump("bad", bad), true)),
              String.valueOf(bad));
      assertEquals(ErrorCode.UNPROCESSABLE, e.code());
    }
    assertEquals(2, svc.bookingCount());
  }

  @Test
  void aBookingWithoutAnIdGetsAFreshOneThatFreesIt() {
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    Selection a = join(svc.select(SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4)), true));
    Selection b = join(svc.select(SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4)), true));
    assertNotNull(a.selectionId());
    assertEquals(a.selectionId(), UUID.fromString(a.selectionId()).toString());
    assertTrue(!a.selectionId().equals(b.selectionId()), "two bookings, two ids");
    assertEquals(2, svc.bookingCount());
    join(svc.free(a.selectionId()));
    assertEquals(1, svc.bookingCount());
  }

  @Test
  void aQueryNeverBooksAndASessionQueryBindsNothing() {
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    Selection q = join(svc.select(ServiceFixture.session("q", "s1", 1, 2, 3, 4), false));
    assertEquals(false, q.booked());
    assertEquals(0, svc.bookingCount());
    assertEquals(0, svc.sessionCount());
    assertEquals(
        ErrorCode.NOT_FOUND,
        assertThrows(SelectionException.class, () -> join(svc.free("q"))).code());
  }
}
