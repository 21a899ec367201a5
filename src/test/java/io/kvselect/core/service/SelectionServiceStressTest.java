package io.kvselect.core.service;

import static io.kvselect.core.service.SelectionServiceTest.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The service's shared state (partitions' load, the reservation index, session bindings, the
 * pending store, the catalog) under concurrent writers and readers, against a single-threaded
 * reference run of the same operations. Each writer thread owns its request ids and sessions and
 * pins every booking to a worker, so the final state does not depend on the interleaving: any
 * difference is a lost or torn update. Seeded and bounded by operation count.
 */
class SelectionServiceStressTest {

  private static final PartitionKey A = new PartitionKey("model-a", "default");
  private static final PartitionKey B = new PartitionKey("model-b", "default");
  private static final int THREADS = 4;
  private static final int OPS_PER_THREAD = 2_500;
  private final MutableClock clock = new MutableClock();

  private SelectionService service() {
    RouterConfig cfg =
        RouterConfigLoader.fromEnv(
            RouterConfig.DEFAULTS, Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    SelectionService svc =
        SelectionService.builder()
            .routerConfig(cfg)
            .clock(clock)
            .sessionAffinityTtl(Duration.ofMinutes(5))
            .random(new Random(11))
            .build();
    for (WorkerSpec w : workers()) {
      join(svc.upsertWorker(w));
    }
    return svc;
  }

  private static List<WorkerSpec> workers() {
    List<WorkerSpec> out = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      out.add(WorkerSpec.of(i, "http://a" + i, 4).withPartition(A.modelName(), A.routingGroup()));
      out.add(
          WorkerSpec.of(10 + i, "http://b" + i, 4).withPartition(B.modelName(), B.routingGroup()));
    }
    return out;
  }

  /** One operation of a writer thread; ids and sessions are owned by the thread. */
  private record Op(
      int kind, String id, PartitionKey partition, long worker, String session, int[] tokens) {}

  private static List<Op> ops(int thread, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<Op> out = new ArrayList<>();
    List<String> live = new ArrayList<>();
    for (int i = 0; i < OPS_PER_THREAD; i++) {
      int k = r.nextInt(10);
      if (k < 4 || live.isEmpty()) {
        boolean a = r.nextBoolean();
        long worker = (a ? 0 : 10) + 1 + r.nextInt(3);
        int[] tokens = new int[4 * (1 + r.nextInt(4))];
        int prefix = r.nextInt(3);
        for (int t = 0; t < tokens.length; t++) {
          tokens[t] = t < 4 ? prefix * 100 + t : r.nextInt(1000);
        }
        String session = r.nextInt(3) == 0 ? "t" + thread + "-s" + r.nextInt(4) : null;
        String id = "t" + thread + "-" + i;
        out.add(new Op(0, id, a ? A : B, worker, session, tokens));
        live.add(id);
      } else if (k < 6) {
        out.add(new Op(1, live.get(r.nextInt(live.size())), null, 0, null, null));
      } else if (k < 7) {
        out.add(new Op(2, live.get(r.nextInt(live.size())), null, 0, null, null));
      } else if (k < 9) {
        out.add(new Op(3, live.remove(r.nextInt(live.size())), null, 0, null, null));
      } else {
        out.add(
            new Op(
                4,
                "sel-t" + thread + "-" + i,
                r.nextBoolean() ? A : B,
                0,
                null,
                new int[] {1, 2, 3, 4}));
      }
    }
    return out;
  }

  private static void apply(SelectionService svc, Op op) {
    switch (op.kind()) {
      case 0 ->
          join(
              svc.select(
                  new SelectRequest(
                      op.partition(),
                      op.id(),
                      PromptInput.tokens(op.tokens()),
                      null,
                      8L,
                      op.session(),
                      null,
                      null,
                      new WorkerRank(op.worker(), -1),
                      null,
                      null,
                      null,
                      false),
                  true));
      case 1 -> join(svc.prefillComplete(op.id()));
      case 2 -> join(svc.outputBlock(op.id(), null));
      case 3 -> join(svc.free(op.id()));
      default ->
          join(
              svc.select(
                  SelectRequest.of(op.partition(), PromptInput.tokens(op.tokens()))
                      .withSelectionId(op.id()),
                  false));
    }
  }

  @Test
  void concurrentWritersAndReadersEndInTheReferenceState() throws Exception {
    List<List<Op>> plans = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      plans.add(ops(t, 1_000 + t));
    }
    SelectionService reference = service();
    for (List<Op> plan : plans) {
      for (Op op : plan) {
        apply(reference, op);
      }
    }

    SelectionService svc = service();
    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    AtomicBoolean writing = new AtomicBoolean(true);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS + 2);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> writers = new ArrayList<>();
    try {
      for (List<Op> plan : plans) {
        writers.add(
            pool.submit(
                () -> {
                  start.await();
                  for (Op op : plan) {
                    apply(svc, op);
                  }
                  return null;
                }));
      }
      Future<?> catalog =
          pool.submit(
              () -> {
                start.await();
                for (int i = 0; i < 2_000 && writing.get(); i++) {
                  for (WorkerSpec w : workers()) {
                    join(svc.upsertWorker(w));
                  }
                }
                return null;
              });
      Future<?> reader =
          pool.submit(
              () -> {
                start.await();
                for (int i = 0; i < 200_000 && writing.get(); i++) {
                  svc.inspection().loads(null, null);
                  svc.inspection().dump();
                  svc.ready();
                  svc.listWorkers(null, null);
                  svc.bookingCount();
                  try {
                    join(
                        svc.reserve(ReservationRequest.replay(i % 2 == 0 ? A : B, "no-such-" + i)));
                  } catch (SelectionException expected) {
                    // a replay of an id nobody selected: 404, and nothing changes
                  }
                }
                return null;
              });
      start.countDown();
      for (Future<?> w : writers) {
        collect(w, errors);
      }
      writing.set(false);
      collect(catalog, errors);
      collect(reader, errors);
    } finally {
      pool.shutdownNow();
    }
    assertTrue(errors.isEmpty(), () -> "exceptions escaped: " + errors);

    assertEquals(reference.inspection().loads(null, null), svc.inspection().loads(null, null));
    assertEquals(reference.bookingCount(), svc.bookingCount());
    assertEquals(reference.pendingSelections(), svc.pendingSelections());
    for (int t = 0; t < THREADS; t++) {
      for (int s = 0; s < 4; s++) {
        String session = "t" + t + "-s" + s;
        for (PartitionKey p : List.of(A, B)) {
          assertEquals(
              boundWorker(reference, p, session),
              boundWorker(svc, p, session),
              session + " in " + p);
        }
      }
    }
  }

  private static void collect(Future<?> f, ConcurrentLinkedQueue<Throwable> errors)
      throws InterruptedException {
    try {
      f.get(120, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      errors.add(e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      errors.add(new AssertionError("a thread did not finish its bounded work (deadlock?)"));
    }
  }

  /** The worker a session's next unpinned selection lands on when bound, else null. */
  private static Long boundWorker(SelectionService svc, PartitionKey p, String session) {
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 4; i++) {
      seen.add(
          join(svc.select(
                  new SelectRequest(
                      p,
                      null,
                      PromptInput.tokens(7, 7, 7, 7),
                      null,
                      null,
                      session,
                      null,
                      null,
                      null,
                      null,
                      null,
                      null,
                      false),
                  false))
              .workerId());
    }
    return seen.size() == 1 ? seen.iterator().next() : null;
  }

  @Test
  void concurrentFirstRequestsOfOneSessionAllLandOnOneWorker() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      for (int round = 0; round < 100; round++) {
        SelectionService svc = service();
        String session = "new-" + round;
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Long>> picks = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          String id = round + "-" + t;
          picks.add(
              pool.submit(
                  () -> {
                    start.await();
                    return join(svc.select(
                            new SelectRequest(
                                A,
                                id,
                                PromptInput.tokens(1, 2, 3, 4),
                                null,
                                null,
                                session,
                                null,
                                null,
                                null,
                                null,
                                null,
                                null,
                                false),
                            true))
                        .workerId();
                  }));
        }
        start.countDown();
        Set<Long> workers = new HashSet<>();
        for (Future<Long> f : picks) {
          workers.add(f.get(60, TimeUnit.SECONDS));
        }
        assertEquals(1, workers.size(), "round " + round + ": " + workers);
        assertEquals(THREADS, svc.bookingCount());
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
