package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.DisaggSpec;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.PolicySettings;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.KvcMode;
import io.kvselect.core.queue.QueueConfig;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The service's housekeeping and gates through the embedded API: {@code expire()} ages out
 * approximate index entries and session bindings, a hold refuses new selections with its reason
 * while lifecycle calls go on, a patch that adds capacity serves the router queue, and the KVC
 * counters and accounts a node exposes for tracing follow the bookings.
 */
class ServiceHousekeepingTest {

  private static final int[] PROMPT = IntStream.rangeClosed(1, 32).toArray();

  private final ServiceFixture f = new ServiceFixture();

  @Test
  void expireDropsApproximateEntriesPastTheirTtl() {
    SelectionService svc =
        f.service(ServiceFixture.approximate("DYN_ROUTER_TTL_SECS", "10"), Duration.ofMinutes(5));
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    join(svc.select(ServiceFixture.req("a", PROMPT), true));
    join(svc.free("a"));
    assertTrue(svc.inspection().indexSize() > 0, "the booking predicted its blocks cached");

    f.clock.advance(Duration.ofSeconds(5));
    svc.expire();
    assertTrue(svc.inspection().indexSize() > 0, "inside the TTL the entries stay");

    f.clock.advance(Duration.ofSeconds(6));
    svc.expire();
    assertEquals(0, svc.inspection().indexSize(), "past the TTL expire() removed them");
  }

  @Test
  void expireSweepsSessionBindingsPastTheirTtl() {
    SelectionService svc = f.service(ServiceFixture.approximate(), Duration.ofMinutes(1));
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    join(svc.select(ServiceFixture.session("a", "chat", PROMPT), true));
    join(svc.free("a"));
    assertEquals(1, svc.sessionCount());

    f.clock.advance(Duration.ofMinutes(2));
    svc.expire();
    assertEquals(0, svc.sessionCount(), "the idle binding was swept");
  }

  @Test
  void aHoldRefusesNewSelectionsWithItsReasonButNotLifecycleCalls() {
    SelectionService svc = f.service(ServiceFixture.approximate(), Duration.ofMinutes(5));
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    AtomicReference<String> reason = new AtomicReference<>();
    svc.hold(reason::get);
    join(svc.select(ServiceFixture.req("before", PROMPT), true));
    assertTrue(svc.ready().ready());

    reason.set("fenced after a pause");
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> join(svc.select(ServiceFixture.req("held", PROMPT), true)));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertEquals("fenced after a pause", e.getMessage());
    assertFalse(svc.ready().ready(), "a held node is not ready");
    assertEquals(1, svc.ready().schedulableWorkers(), "its workers are still registered");
    join(svc.prefillComplete("before"));
    join(svc.free("before"));
    assertEquals(0, svc.bookingCount(), "a booking made before the hold still ends");

    reason.set(null);
    assertTrue(svc.ready().ready());
    assertEquals(1, join(svc.select(ServiceFixture.req("after", PROMPT), true)).workerId());
  }

  @Test
  void aPatchThatAddsCapacityServesTheRouterQueue() {
    SelectionService svc =
        f.builder(
                ServiceFixture.approximate("DYN_ROUTER_QUEUE_THRESHOLD", "1.0"),
                Duration.ofMinutes(5))
            .queue(QueueConfig.defaults("fcfs"), Duration.ofMinutes(5))
            .build();
    join(svc.upsertWorker(ServiceFixture.capped(1, 16)));
    join(svc.select(ServiceFixture.req("first", PROMPT), true));
    CompletionStage<Selection> waiting =
        svc.select(ServiceFixture.req("second", IntStream.range(100, 132).toArray()), true);
    assertFalse(waiting.toCompletableFuture().isDone(), "the rank is busy: parked");

    join(svc.patchWorker(1, s -> ServiceFixture.capped(1, 1_000_000L)));
    assertTrue(waiting.toCompletableFuture().isDone(), "the patched capacity took the request");
    assertEquals(1, join(waiting).workerId());
  }

  @Test
  void kvcCountersAndAccountsFollowTheBookings() {
    SelectionService svc =
        f.service(
            ServiceFixture.approximate()
                .withSelectionPolicy(PolicySettings.defaults().withName("kvc")),
            Duration.ofMinutes(5));
    for (long id = 1; id <= 2; id++) {
      join(
          svc.upsertWorker(
              WorkerSpec.builder(id)
                  .endpoint("http://w" + id)
                  .blockSize(16)
                  .disagg(
                      id == 1
                          ? new DisaggSpec("decode", 1_000_000L, null)
                          : new DisaggSpec("prefill", null, null))
                  .build()));
    }
    assertEquals(0, svc.kvcMetrics().requests(KvcMode.SEED));
    Selection s = join(svc.select(ServiceFixture.session("a", "s1", PROMPT), true));
    assertEquals("seed", s.kvc().mode());
    assertEquals(1, svc.kvcMetrics().requests(KvcMode.SEED), "the seed was counted");
    assertNotNull(svc.kvcAccount(new WorkerRank(1, 0)));
    assertEquals(svc.kvcAccount(new WorkerRank(2, 0)).residentTokens(), 0, "nothing on prefill");
  }
}
