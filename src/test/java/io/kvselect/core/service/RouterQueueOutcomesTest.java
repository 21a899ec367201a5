package io.kvselect.core.service;

import static io.kvselect.core.service.SelectionServiceTest.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * How requests leave the router queue other than by being served, as the queue observer and the
 * callers see it: a drain ({@code rejectQueued}) fails every waiter with 503, a waiter whose
 * workers all left fails when its turn comes, a timeout reports the whole timeout as its wait, a
 * queue limit refuses before waiting; and a backlog is served whole by one drain without a
 * continuation executor, or when that executor refuses.
 */
class RouterQueueOutcomesTest {

  private static final PartitionKey P = new PartitionKey(null, null);
  private final MutableClock clock = new MutableClock();

  /** "partition|class|outcome|waitedNanos" per dequeued request. */
  private final List<String> outcomes = new CopyOnWriteArrayList<>();

  private final List<Long> waited = new CopyOnWriteArrayList<>();

  private SelectionService service(String yaml, Duration timeout) {
    RouterConfig cfg =
        RouterConfigLoader.fromEnv(
            RouterConfig.DEFAULTS,
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "1.0"));
    QueueConfig q =
        yaml == null
            ? QueueConfig.defaults(cfg.queue().policy())
            : QueueConfig.parse(yaml, cfg.queue().policy());
    SelectionService svc =
        SelectionService.builder()
            .routerConfig(cfg)
            .clock(clock)
            .random(new Random(5))
            .queue(q, timeout)
            .build();
    svc.addQueueObserver(
        (partition, cls, w, outcome) -> {
          outcomes.add(partition + "|" + cls + "|" + outcome);
          waited.add(w);
        });
    join(svc.upsertWorker(worker(16L)));
    return svc;
  }

  private static WorkerSpec worker(long maxBatched) {
    return WorkerSpec.builder(1)
        .endpoint("http://w1")
        .blockSize(4)
        .maxNumBatchedTokens(maxBatched)
        .build();
  }

  private static SelectRequest req(String id, int base) {
    int[] t = new int[32];
    for (int i = 0; i < t.length; i++) {
      t[i] = base + i;
    }
    return new SelectRequest(
        P, id, PromptInput.tokens(t), null, null, null, null, null, null, null, null, null, false);
  }

  private static int pending(SelectionService svc) {
    return svc.inspection().loads(null, null).get(0).pendingCount();
  }

  private static SelectionException failure(CompletableFuture<?> f) {
    Throwable t = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
    return (SelectionException) SelectionException.unwrap(t);
  }

  private List<CompletableFuture<Selection>> park(SelectionService svc, int n) {
    List<CompletableFuture<Selection>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(svc.select(req("p" + i, 1_000 + 64 * i), true).toCompletableFuture());
    }
    return out;
  }

  @Test
  void aDrainFailsEveryWaiterWith503AndGivesTheirIdsBack() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    join(svc.select(req("first", 0), true));
    List<CompletableFuture<Selection>> parked = park(svc, 3);
    assertEquals(3, pending(svc));
    svc.shutdown();
    assertEquals(3, svc.rejectQueued("node draining"));
    assertEquals(0, pending(svc));
    for (CompletableFuture<Selection> f : parked) {
      SelectionException e = failure(f);
      assertEquals(ErrorCode.NOT_READY, e.code());
      assertEquals("node draining", e.getMessage());
    }
    String rejected = P + "|default|rejected";
    assertEquals(List.of(rejected, rejected, rejected), outcomes);
    assertEquals(0, svc.rejectQueued("again"), "nothing left to fail");
    assertEquals(1, svc.bookingCount());
    SelectionException gone = assertThrows(SelectionException.class, () -> join(svc.free("p0")));
    assertEquals(ErrorCode.NOT_FOUND, gone.code(), "a failed waiter books nothing");
  }

  @Test
  void aWaiterWhoseWorkersLeftFailsWhenItsTurnComes() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    join(svc.select(req("first", 0), true));
    CompletableFuture<Selection> w = svc.select(req("w", 500), true).toCompletableFuture();
    join(svc.setUnreachable(1, "engine down"));
    SelectionException e = failure(w);
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertTrue(outcomes.get(outcomes.size() - 1).endsWith("|failed"), outcomes.toString());
    assertEquals(0, pending(svc));
  }

  @Test
  void aTimeoutReportsTheWholeTimeoutAsItsWait() throws Exception {
    SelectionService svc = service(null, Duration.ofMillis(40));
    join(svc.select(req("first", 0), true));
    CompletableFuture<Selection> late = svc.select(req("late", 100), true).toCompletableFuture();
    SelectionException e = failure(late);
    assertEquals(ErrorCode.OVERLOADED, e.code());
    assertEquals(40L, e.details().get("current"));
    assertEquals(40L, e.details().get("limit"));
    assertTrue(e.getMessage().contains("stayed busy for 40 ms"), e.getMessage());
    assertEquals(1, outcomes.size());
    assertTrue(outcomes.get(0).endsWith("|default|timeout"), outcomes.toString());
    assertEquals(List.of(Duration.ofMillis(40).toNanos()), waited);
  }

  @Test
  void aQueueLimitRefusesBeforeWaiting() {
    SelectionService svc =
        service(
            "classes:\n  - name: batch\n    request_queue_limit_per_worker: 0\n",
            Duration.ofMinutes(5));
    join(svc.select(req("first", 0), true));
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> join(svc.select(req("b", 100).withPolicyClass("batch"), true)));
    assertEquals(ErrorCode.OVERLOADED, e.code());
    assertTrue(e.getMessage().contains("is full (requests: 0 of 0)"), e.getMessage());
    assertEquals(List.of(0L), waited, "a refused request waited nothing");
    assertTrue(outcomes.get(0).endsWith("|batch|rejected"), outcomes.toString());
  }

  @Test
  void withoutAContinuationExecutorOneDrainServesTheWholeBacklog() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    join(svc.select(req("first", 0), true));
    List<CompletableFuture<Selection>> parked = park(svc, 2 * RouterQueueing.SLICE + 5);
    join(svc.upsertWorker(worker(1_000_000L)));
    for (CompletableFuture<Selection> f : parked) {
      assertTrue(f.isDone() && !f.isCompletedExceptionally(), "served on the caller's thread");
    }
    assertEquals(0, pending(svc));
    assertEquals(parked.size() + 1, svc.bookingCount());
    assertEquals(parked.size(), outcomes.stream().filter(o -> o.endsWith("|served")).count());
  }

  @Test
  void aContinuationExecutorThatRefusesLeavesTheBacklogToTheCaller() {
    SelectionService svc = service(null, Duration.ofMinutes(5));
    List<Runnable> offered = new ArrayList<>();
    svc.continueQueuesOn(
        task -> {
          offered.add(task);
          throw new RejectedExecutionException("closing");
        });
    join(svc.select(req("first", 0), true));
    List<CompletableFuture<Selection>> parked = park(svc, 3 * RouterQueueing.SLICE);
    join(svc.upsertWorker(worker(1_000_000L)));
    assertEquals(1, offered.size(), "one continuation was offered, and refused");
    for (CompletableFuture<Selection> f : parked) {
      assertTrue(f.isDone() && !f.isCompletedExceptionally());
    }
    assertEquals(0, pending(svc));
    assertEquals(parked.size() + 1, svc.bookingCount());
  }
}
