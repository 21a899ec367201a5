package io.kvselect.core.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The embedded Java API and the core invariants, with a hand-moved clock. */
class SelectionServiceTest {

  private static final PartitionKey P = new PartitionKey(null, null);
  private final MutableClock clock = new MutableClock();

  private SelectionService service(Duration affinityTtl) {
    RouterConfig cfg =
        RouterConfigLoader.fromEnv(
            RouterConfig.DEFAULTS, Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    return SelectionService.builder()
        .routerConfig(cfg)
        .sessionAffinityTtl(affinityTtl)
        .clock(clock)
        .random(new SplittableRandom(7))
        .build();
  }

  private static SelectRequest req(String id, int... tokens) {
    return SelectRequest.of(P, PromptInput.tokens(tokens)).withSelectionId(id);
  }

  private static SelectRequest session(String id, String session, int... tokens) {
    return req(id, tokens).withSessionId(session);
  }

  @Test
  void embeddedApiSelectsBooksAndFrees() {
    SelectionService svc = service(null);
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    Selection s = join(svc.select(req("a", 1, 2, 3, 4, 5, 6, 7, 8), true));
    assertEquals(1, s.workerId());
    assertTrue(s.booked());
    assertEquals(1, svc.bookingCount(), "the reservation index holds the booking");
    join(svc.prefillComplete("a"));
    assertEquals(
        0, svc.inspection().loads(null, null).get(0).loads().get(0).potentialPrefillTokens());
    join(svc.free("a"));
    assertEquals(0, svc.bookingCount(), "and drops it once freed");
    SelectionException e = assertThrows(SelectionException.class, () -> join(svc.free("a")));
    assertEquals(ErrorCode.NOT_FOUND, e.code());
  }

  @Test
  void activeRequestsExpireFromAdmission() {
    SelectionService svc = service(null);
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    join(svc.select(req("old", 1, 2, 3, 4), true));
    clock.advanceSeconds(200);
    join(svc.select(req("young", 5, 6, 7, 8), true));
    join(svc.outputBlock("old", null));
    clock.advanceSeconds(101);
    assertEquals(1, svc.expire(), "300 s after admission, regardless of output progress");
    assertEquals(1, svc.bookingCount());
    assertThrows(SelectionException.class, () -> join(svc.free("old")));
    join(svc.free("young"));
  }

  @Test
  void approximateEntriesExpireAfterRouterTtl() {
    SelectionService svc = service(null);
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    join(svc.select(req("a", 1, 2, 3, 4), true));
    SelectRequest q = SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4));
    assertEquals(1, svc.inspection().overlapScores(q).workers().get(0).deviceBlocks());
    List<PartitionDump> dump = svc.inspection().dump();
    StoredBlock b = dump.get(0).blocks().get(0);
    assertEquals(new WorkerRank(1, 0), b.rank());
    assertEquals(StorageTier.DEVICE, b.tier());
    clock.advanceSeconds(121);
    svc.expire();
    assertEquals(0, svc.inspection().overlapScores(q).workers().get(0).deviceBlocks());
  }

  @Test
  void sessionLeaseHoldsBindingUntilReleasedThenIdleTtl() {
    SelectionService svc = service(Duration.ofSeconds(60));
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    join(svc.upsertWorker(WorkerSpec.of(2, "http://w2", 4)));
    long bound = join(svc.select(session("r1", "S", 1, 2, 3, 4), true)).workerId();
    clock.advanceSeconds(200);
    svc.expire();
    assertEquals(
        bound,
        join(svc.select(session(null, "S", 9, 9, 9, 9), false)).workerId(),
        "a live lease keeps the binding");
    join(svc.free("r1"));
    clock.advanceSeconds(30);
    svc.expire();
    assertEquals(
        bound,
        join(svc.select(session(null, "S", 9, 9, 9, 9), false)).workerId(),
        "idle TTL not yet over");
    join(svc.select(req("load", 20, 21, 22, 23, 24, 25, 26, 27), true));
    clock.advanceSeconds(31);
    svc.expire();
    long other =
        svc.inspection().loads(null, null).get(0).loads().stream()
            .filter(l -> l.activeRequests() == 0)
            .findFirst()
            .orElseThrow()
            .workerId();
    assertEquals(
        other,
        join(svc.select(session(null, "S", 9, 9, 9, 9), false)).workerId(),
        "after the idle TTL the session is free again and follows the cost function");
  }

  @Test
  void plainSelectNeverCreatesABinding() {
    SelectionService svc = service(Duration.ofSeconds(60));
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    join(svc.upsertWorker(WorkerSpec.of(2, "http://w2", 4)));
    join(svc.select(session(null, "Q", 1, 2, 3, 4), false));
    join(svc.select(req("load1", 30, 31, 32, 33), true));
    long loaded =
        svc.inspection().loads(null, null).get(0).loads().stream()
            .filter(l -> l.activeRequests() == 1)
            .findFirst()
            .orElseThrow()
            .workerId();
    for (int i = 0; i < 5; i++) {
      assertNotEquals(loaded, join(svc.select(session(null, "Q", 9, 9, 9, 9), false)).workerId());
    }
  }

  @Test
  void workerLeavingAfterTheHoldReinitializesTheSession() {
    SelectionService svc = service(Duration.ofSeconds(60));
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    long first = join(svc.select(session("r1", "S", 1, 2, 3, 4), true)).workerId();
    join(svc.upsertWorker(WorkerSpec.of(2, "http://w2", 4)));
    join(svc.deleteWorker(first));
    Selection s = join(svc.select(session("r2", "S", 1, 2, 3, 4), true));
    assertEquals(2, s.workerId());
    assertEquals(2, join(svc.select(session(null, "S", 5, 5, 5, 5), false)).workerId());
  }

  @Test
  void replayIsRejectedWhenTheSessionMovedToAnotherWorker() {
    SelectionService svc = service(Duration.ofSeconds(60));
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    join(svc.upsertWorker(WorkerSpec.of(2, "http://w2", 4)));
    Selection pending = join(svc.select(session("two-phase", "S", 1, 2, 3, 4), false));
    long other = 3 - pending.workerId();
    SelectRequest pinned =
        new SelectRequest(
            P,
            "direct",
            PromptInput.tokens(1, 2, 3, 4),
            null,
            null,
            "S",
            null,
            null,
            new WorkerRank(other, 0),
            null,
            null,
            null,
            false);
    join(svc.select(pinned, true));
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> join(svc.reserve(ReservationRequest.replay(P, "two-phase"))));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertThrows(
        SelectionException.class,
        () -> join(svc.reserve(ReservationRequest.replay(P, "two-phase"))),
        "the rejected entry is gone");
  }

  @Test
  void pendingSelectionExpiresAfterCacheTtl() {
    SelectionService svc = service(null);
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    join(svc.select(req("p", 1, 2, 3, 4), false));
    clock.advanceSeconds(121);
    SelectionException e =
        assertThrows(
            SelectionException.class, () -> join(svc.reserve(ReservationRequest.replay(P, "p"))));
    assertEquals(ErrorCode.NOT_FOUND, e.code());
  }

  @Test
  void temperatureSpreadsChoicesAcrossEqualishWorkers() {
    RouterConfig cfg =
        RouterConfigLoader.fromEnv(
            RouterConfig.DEFAULTS,
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_TEMPERATURE", "1.0"));
    SelectionService svc =
        SelectionService.builder()
            .routerConfig(cfg)
            .clock(clock)
            .random(new SplittableRandom(3))
            .build();
    for (long id = 1; id <= 3; id++) {
      join(svc.upsertWorker(WorkerSpec.of(id, "http://w" + id, 4)));
    }
    java.util.Set<Long> seen = new java.util.HashSet<>();
    for (int i = 0; i < 60; i++) {
      seen.add(
          join(svc.select(SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4)), false)).workerId());
    }
    assertEquals(3, seen.size());
  }

  @Test
  void aFailingCatalogStepRollsTheRegistrationBack() {
    SelectionService svc = service(null);
    java.util.concurrent.atomic.AtomicBoolean fail =
        new java.util.concurrent.atomic.AtomicBoolean();
    svc.addCatalogListener(
        new io.kvselect.core.catalog.CatalogListener() {
          @Override
          public void workerUpserted(
              io.kvselect.core.catalog.WorkerRecord previous,
              io.kvselect.core.catalog.WorkerRecord current) {
            if (fail.get()) {
              throw new IllegalStateException("listener refused " + current.workerId());
            }
          }
        });
    join(svc.upsertWorker(WorkerSpec.of(1, "http://w1", 4)));
    join(svc.select(req("a", 1, 2, 3, 4), true));
    fail.set(true);

    assertThrows(
        IllegalStateException.class,
        () -> join(svc.upsertWorker(WorkerSpec.of(2, "http://w2", 4))));
    assertEquals(null, svc.worker(2), "a new worker whose registration failed is not stored");
    assertEquals(1, svc.listWorkers(null, null).size());

    assertThrows(
        IllegalStateException.class,
        () -> join(svc.upsertWorker(WorkerSpec.of(1, "http://moved", 4))));
    assertEquals(
        "http://w1",
        svc.worker(1).spec().endpoint(),
        "a replaced worker keeps its previous registration");
    fail.set(false);
    assertEquals(
        1, join(svc.select(req(null, 1, 2, 3, 4), false)).workerId(), "and stays schedulable");
  }

  /** Waits for a stage of the embedded API (complete on return here), rethrowing its failure. */
  static <T> T join(java.util.concurrent.CompletionStage<T> st) {
    try {
      return st.toCompletableFuture().join();
    } catch (java.util.concurrent.CompletionException e) {
      throw (RuntimeException) SelectionException.unwrap(e);
    }
  }
}
