package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.DisaggSpec;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.PolicySettings;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.KvcAnswer;
import io.kvselect.core.kvc.KvcSnapshot;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The {@code kvc} policy through the service (its dispatch stage, registered like any policy):
 * what a booking records in the KVC state and gives back when it ends, fails, expires or its
 * worker leaves, and what a query-only selection leaves alone.
 */
class KvcServiceTest {

  private static final String PART = ServiceFixture.P.toString();
  private static final int[] PROMPT = IntStream.rangeClosed(1, 64).toArray();

  private final ServiceFixture f = new ServiceFixture();
  private final SelectionService svc =
      f.service(
          ServiceFixture.approximate()
              .withSelectionPolicy(PolicySettings.defaults().withName("kvc")),
          Duration.ofMinutes(5));

  private static WorkerSpec spec(long id, String type, Long capacity) {
    return WorkerSpec.builder(id)
        .endpoint("http://w" + id)
        .blockSize(16)
        .disagg(new DisaggSpec(type, capacity, null))
        .build();
  }

  private void workers(long decodeCapacity) {
    join(svc.upsertWorker(spec(1, "decode", decodeCapacity)));
    join(svc.upsertWorker(spec(2, "decode", decodeCapacity)));
    join(svc.upsertWorker(spec(3, "prefill", null)));
  }

  private KvcSnapshot snapshot(String session) {
    return join(svc.kvcState().snapshot(PART, session));
  }

  private static long inflight(KvcSnapshot s, WorkerRank r) {
    return s.inflight().getOrDefault(r, 0L);
  }

  @Test
  void aSessionIsSeededThenServedDirectAndEachBookingHoldsItsWorkerUntilFreed() {
    workers(1_000_000);
    Selection first = join(svc.select(ServiceFixture.session("a", "s1", PROMPT), true));
    KvcAnswer k = first.kvc();
    assertNotNull(k, "the dispatch stage answered");
    assertEquals("seed", k.mode());
    assertNotNull(k.prefill(), "a seed names the prefill worker");
    assertEquals(3, k.prefill().workerId());
    assertEquals("http://w3", k.prefill().endpoint());
    assertNotEquals(3, first.workerId(), "booked on a decode worker");
    WorkerRank d = new WorkerRank(first.workerId(), 0);
    assertEquals(d, snapshot("s1").pin());
    assertEquals(1, inflight(snapshot("s1"), d));

    join(svc.free("a"));
    assertEquals(0, inflight(snapshot("s1"), d), "freeing ends the promise");

    Selection again = join(svc.select(ServiceFixture.session("b", "s1", PROMPT), true));
    assertEquals("direct", again.kvc().mode());
    assertNull(again.kvc().prefill(), "direct needs no prefill worker");
    assertEquals(d.workerId(), again.workerId(), "the pinned worker");
    assertEquals(1, inflight(snapshot("s1"), d));
    assertEquals(2, snapshot("s1").turns());
  }

  @Test
  void aQueryOnlySelectionRecordsNothing() {
    workers(1_000_000);
    Selection s = join(svc.select(ServiceFixture.session("q", "s2", PROMPT), false));
    assertNotNull(s.kvc());
    assertFalse(s.booked());
    assertEquals(KvcSnapshot.EMPTY, snapshot("s2"));
    assertEquals(0, svc.bookingCount());
  }

  @Test
  void aBookingThatFailsAfterTheDispatchGivesItsInFlightBack() {
    workers(1_000_000);
    Selection s = join(svc.select(ServiceFixture.session("dup", "s3", PROMPT), true));
    WorkerRank d = new WorkerRank(s.workerId(), 0);
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> join(svc.select(ServiceFixture.session("dup", "s3", PROMPT), true)));
    assertEquals(ErrorCode.CONFLICT, e.code());
    assertEquals(
        1, inflight(snapshot("s3"), d), "the failed booking's in-flight count was returned");
  }

  @Test
  void workersWithoutRoomAreProbedAndTheRequestFallsBack() {
    workers(8);
    Selection s = join(svc.select(ServiceFixture.session("f", "s4", PROMPT), true));
    KvcAnswer k = s.kvc();
    assertEquals("fallback", k.mode(), k.toString());
    assertFalse(k.attempts().isEmpty(), "the refusing workers are listed");
    for (KvcAnswer.Probe p : k.attempts()) {
      assertTrue(p.workerId() == 1 || p.workerId() == 2, p.toString());
      assertNotNull(p.reason());
    }
  }

  @Test
  void expiryAndTheDecodeWorkerLeavingEndWhatABookingHeld() {
    workers(1_000_000);
    Selection s = join(svc.select(ServiceFixture.session("e", "s5", PROMPT), true));
    WorkerRank d = new WorkerRank(s.workerId(), 0);
    f.clock.advance(Duration.ofSeconds(301));
    assertEquals(1, svc.expire());
    assertEquals(0, inflight(snapshot("s5"), d), "an expired booking ends its promise");
    assertEquals(d, snapshot("s5").pin());
    join(svc.deleteWorker(d.workerId()));
    assertNull(snapshot("s5").pin(), "a removed worker is no pin");
  }

  @Test
  void aFreedBookingLeavesItsSessionResidentOnItsWorker() {
    workers(100);
    Selection first = join(svc.select(ServiceFixture.session("a", "s6", PROMPT), true));
    long d = first.workerId();
    join(svc.free("a"));
    Selection other = join(svc.select(ServiceFixture.session("b", "s7", PROMPT), true));
    assertTrue(
        other.kvc().attempts().stream()
            .anyMatch(
                p -> p.workerId() == d && "session-not-resident-no-capacity".equals(p.reason())),
        "s6's 64 resident tokens leave no room for 64 more on a 100-token worker: " + other.kvc());
  }
}
