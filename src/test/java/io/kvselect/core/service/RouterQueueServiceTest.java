package io.kvselect.core.service;

import static io.kvselect.core.service.SelectionServiceTest.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The router queue through the embedded API: busy ranks park requests, freed capacity serves them
 * in policy order with refreshed overlap, limits and timeouts fail with 429 details, a departed
 * caller leaves the queue, and a failed wait books nothing.
 */
class RouterQueueServiceTest {

  private static final PartitionKey P = new PartitionKey(null, null);
  private final MutableClock clock = new MutableClock();
  private final List<String> outcomes = new java.util.concurrent.CopyOnWriteArrayList<>();

  private SelectionService service(String yaml, Duration timeout, String... env) {
    Map<String, String> vars = new java.util.HashMap<>();
    vars.put("DYN_ROUTER_USE_KV_EVENTS", "false");
    vars.put("DYN_ROUTER_QUEUE_THRESHOLD", "1.0");
    for (int i = 0; i < env.length; i += 2) {
      vars.put(env[i], env[i + 1]);
    }
    RouterConfig cfg = RouterConfigLoader.fromEnv(RouterConfig.DEFAULTS, vars);
    String policy = cfg.queue().policy();
    QueueConfig q = yaml == null ? QueueConfig.defaults(policy) : QueueConfig.parse(yaml, policy);
    SelectionService svc =
        SelectionService.builder()
            .routerConfig(cfg)
            .clock(clock)
            .random(new Random(5))
            .queue(q, timeout)
            .build();
    svc.addQueueObserver((partition, cls, waited, outcome) -> outcomes.add(cls + ":" + outcome));
    join(
        svc.upsertWorker(
            WorkerSpec.builder(1)
                .endpoint("http://w1")
                .blockSize(4)
                .maxNumBatchedTokens(16L)
                .build()));
    return svc;
  }

  private static SelectRequest req(String id, int base, String cls, Double jump, Long strict) {
    int[] t = new int[32];
    for (int i = 0; i < t.length; i++) {
      t[i] = base + i;
    }
    return new SelectRequest(
        P,
        id,
        PromptInput.tokens(t),
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
        cls,
        jump,
        strict);
  }

  private static int pending(SelectionService svc) {
    return svc.inspection().loads(null, null).get(0).pendingCount();
  }

  @Test
  void busyRanksParkAndFreedCapacityServesInPriorityOrder() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    join(svc.select(req("first", 0, null, null, null), true));
    CompletionStage<Selection> plain = svc.select(req("plain", 100, null, null, null), true);
    CompletionStage<Selection> jumped = svc.select(req("jumped", 200, null, 60.0, null), true);
    CompletionStage<Selection> strict = svc.select(req("strict", 300, null, null, 7L), true);
    CompletionStage<Selection> query = svc.select(req("query", 400, null, null, null), false);
    assertEquals(4, pending(svc));
    assertEquals(128, svc.inspection().loads(null, null).get(0).pendingIslTokens());
    assertEquals(Map.of("default:default/default", 4), svc.inspection().queueDepths());
    assertFalse(plain.toCompletableFuture().isDone());
    Selection advisory =
        join(
            svc.select(
                new SelectRequest(
                    P,
                    null,
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
                    true),
                false));
    assertEquals(1, advisory.workerId(), "an advisory select never waits");

    List<String> served = new ArrayList<>();
    String last = "first";
    List<CompletionStage<Selection>> order = List.of(strict, jumped, plain);
    for (CompletionStage<Selection> next : order) {
      join(svc.prefillComplete(last));
      Selection s = join(next);
      served.add(s.selectionId());
      last = s.selectionId();
    }
    assertEquals(
        List.of("strict", "jumped", "plain"),
        served,
        "strict priority, then priority_jump, then arrival");
    join(svc.prefillComplete(last));
    assertEquals(
        "query", join(query).selectionId(), "a query-only select waits too, and books nothing");
    assertEquals(4, svc.bookingCount());
    assertEquals(0, pending(svc));
    assertEquals(4, outcomes.stream().filter(o -> o.endsWith(":served")).count());
  }

  @Test
  void freeingAReservationAlsoServesTheQueue() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    join(svc.select(req("first", 0, null, null, null), true));
    CompletionStage<Selection> waiting = svc.select(req("w", 100, null, null, null), true);
    join(svc.free("first"));
    assertEquals("w", join(waiting).selectionId());
  }

  @Test
  void aWaitPastTheTimeoutIs429AndBooksNothing() throws Exception {
    SelectionService svc = service(null, Duration.ofMillis(50));
    join(svc.select(req("first", 0, null, null, null), true));
    CompletableFuture<Selection> late =
        svc.select(req("late", 100, null, null, null), true).toCompletableFuture();
    Throwable t =
        assertThrows(
            java.util.concurrent.ExecutionException.class, () -> late.get(10, TimeUnit.SECONDS));
    SelectionException e = (SelectionException) SelectionException.unwrap(t);
    assertEquals(ErrorCode.OVERLOADED, e.code());
    assertEquals("timeout", e.details().get("limit_kind"));
    assertEquals("default", e.details().get("policy_class"));
    assertEquals(1, svc.bookingCount());
    assertEquals(0, pending(svc));
    assertThrows(SelectionException.class, () -> join(svc.free("late")), "the id was given back");
    assertTrue(outcomes.contains("default:timeout"), outcomes.toString());
  }

  @Test
  void aTimeoutRunsOnTheContinuationExecutorNotOnAThreadOfItsOwn() throws Exception {
    SelectionService svc = service(null, Duration.ofMillis(50));
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newSingleThreadExecutor(r -> new Thread(r, "continuations"));
    try {
      java.util.concurrent.atomic.AtomicInteger ran =
          new java.util.concurrent.atomic.AtomicInteger();
      svc.continueQueuesOn(
          task ->
              pool.execute(
                  () -> {
                    ran.incrementAndGet();
                    task.run();
                  }));
      join(svc.select(req("first", 0, null, null, null), true));
      String[] failedOn = new String[1];
      CompletableFuture<Selection> late =
          svc.select(req("late", 100, null, null, null), true)
              .toCompletableFuture()
              .whenComplete((s, e) -> failedOn[0] = Thread.currentThread().getName());
      Throwable t =
          assertThrows(
              java.util.concurrent.ExecutionException.class, () -> late.get(10, TimeUnit.SECONDS));
      assertEquals(
          "timeout",
          ((SelectionException) SelectionException.unwrap(t)).details().get("limit_kind"));
      assertEquals(
          "continuations", failedOn[0], "the waiter timed out on the continuation executor");
      assertEquals(1, ran.get());
      assertEquals(0, pending(svc));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aCallerThatGoesAwayLeavesTheQueue() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    join(svc.select(req("first", 0, null, null, null), true));
    CompletableFuture<Void> gone = new CompletableFuture<>();
    CompletionStage<Selection> waiting = svc.select(req("gone", 100, null, null, null), true, gone);
    assertEquals(1, pending(svc));
    gone.complete(null);
    assertEquals(0, pending(svc));
    assertTrue(waiting.toCompletableFuture().isCompletedExceptionally());
    join(svc.prefillComplete("first"));
    assertEquals(1, svc.bookingCount(), "the departed request never booked");
    assertTrue(outcomes.contains("default:cancelled"), outcomes.toString());
  }

  @Test
  void classLimitsRejectWithDetailsAndChangeNothing() {
    SelectionService svc =
        service(
            "classes:\n  - name: batch\n    request_queue_limit_per_worker: 0\n",
            Duration.ofMinutes(5));
    join(svc.select(req("first", 0, null, null, null), true));
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> join(svc.select(req("b", 100, "batch", null, null), true)));
    assertEquals(ErrorCode.OVERLOADED, e.code());
    assertEquals(
        Map.of("policy_class", "batch", "limit_kind", "requests", "current", 0L, "limit", 0L),
        e.details());
    assertEquals(0, pending(svc));
    assertEquals(1, svc.bookingCount());
    assertTrue(outcomes.contains("batch:rejected"), outcomes.toString());
  }

  @Test
  void aClassThresholdQueuesOnlyThatClass() {
    SelectionService svc =
        service(
            "classes:\n  - name: strict\n    prefill_busy_threshold: 0.5\n",
            Duration.ofMinutes(5),
            "DYN_ROUTER_QUEUE_THRESHOLD",
            "100");
    int[] small = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    join(
        svc.select(
            new SelectRequest(
                P,
                "small",
                PromptInput.tokens(small),
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                false),
            true));
    assertEquals(
        "ok",
        join(svc.select(req("default-class", 100, null, null, null), true)).selectionId().isEmpty()
            ? ""
            : "ok",
        "threshold 100 x 16: not busy for the default class");
    CompletionStage<Selection> strict = svc.select(req("strict", 200, "strict", null, null), true);
    assertEquals(1, pending(svc), "busy at 0.5 x 16 for the strict class");
    join(svc.free("default-class"));
    assertFalse(strict.toCompletableFuture().isDone(), "10 tokens still above 8");
    join(svc.free("small"));
    assertEquals("strict", join(strict).selectionId());
  }

  @Test
  void priorityJumpMustBeANonNegativeNumber() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    SelectionException e =
        assertThrows(
            SelectionException.class, () -> join(svc.select(req("x", 0, null, -1.0, null), true)));
    assertEquals(ErrorCode.UNPROCESSABLE, e.code());
    assertTrue(e.getMessage().contains("priority_jump"), e.getMessage());
    assertEquals(0, svc.bookingCount());
    assertNull(svc.worker(2));
  }

  @Test
  void aLongQueueIsServedSliceBySliceOnTheContinuationExecutor() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    java.util.ArrayDeque<Runnable> continuations = new java.util.ArrayDeque<>();
    svc.continueQueuesOn(continuations::add);
    join(svc.select(req("first", 0, null, null, null), true));
    List<CompletableFuture<Selection>> parked = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      parked.add(
          svc.select(req("p" + i, 1_000 + 64 * i, null, null, null), true).toCompletableFuture());
    }
    assertEquals(200, pending(svc));
    // a larger batch wakes the queue: the caller's thread serves one slice and hands on the rest
    join(
        svc.upsertWorker(
            WorkerSpec.builder(1)
                .endpoint("http://w1")
                .blockSize(4)
                .maxNumBatchedTokens(1_000_000L)
                .build()));
    for (int i = 0; i < parked.size(); i++) {
      // equal prompts, equal priority: the oldest slice is served first
      assertEquals(
          i < RouterQueueing.SLICE, parked.get(i).isDone(), "p" + i + " after the first slice");
    }
    assertEquals(1, continuations.size(), "one continuation per partition");
    int slices = 1;
    while (!continuations.isEmpty()) {
      continuations.poll().run();
      slices++;
      assertTrue(continuations.size() <= 1, "never two continuations of one partition at once");
    }
    assertEquals(4, slices, "200 requests in slices of " + RouterQueueing.SLICE);
    assertEquals(0, pending(svc));
    for (int i = 0; i < parked.size(); i++) {
      assertTrue(
          parked.get(i).isDone() && !parked.get(i).isCompletedExceptionally(), "p" + i + " served");
    }
    assertEquals(201, svc.bookingCount());
  }
}
