package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.service.PotentialLoad;
import io.kvselect.core.service.PromptInput;
import io.kvselect.core.service.SelectRequest;
import io.kvselect.core.service.Selection;
import io.kvselect.core.service.SelectionService;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Three clustered nodes in one JVM (loopback, random cluster name), syncing load and catalog over
 * the event bus with a 1 s reconciliation interval. Each test uses its own partition. Node A can
 * drop its outgoing load steps (an outbound interceptor), so reconciliation has to repair the
 * views.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LoadSyncClusterTest {

  private static final Duration INTERVAL = Duration.ofSeconds(1);
  private static final Duration CONVERGED = Duration.ofSeconds(20);
  private static final RouterConfig ROUTER =
      SyncTestNode.router("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "1.0");

  private SyncTestNode.Cluster cluster;
  private SyncTestNode a;
  private SyncTestNode b;
  private SyncTestNode c;

  /** Load steps node A still has to drop. */
  private final AtomicInteger toDrop = new AtomicInteger();

  private final AtomicInteger dropped = new AtomicInteger();

  /** Catalog changes node A still has to drop, and how many it dropped. */
  private final AtomicInteger catalogToDrop = new AtomicInteger();

  private final AtomicInteger catalogDropped = new AtomicInteger();

  @BeforeAll
  void startCluster() throws Exception {
    cluster = SyncTestNode.Cluster.random();
    PeerSyncOptions opts = PeerSyncOptions.withInterval(INTERVAL);
    a = SyncTestNode.start(cluster, opts, ROUTER, false);
    b = SyncTestNode.start(cluster, opts, ROUTER, false);
    c = SyncTestNode.start(cluster, opts, ROUTER, false);
    await().atMost(Duration.ofSeconds(60)).until(() -> a.manager.getNodes().size() == 3);
    a.vertx
        .eventBus()
        .addOutboundInterceptor(
            ctx -> {
              if (SyncAddresses.STREAM.equals(ctx.message().address())
                  && isLoadStep(ctx.body())
                  && toDrop.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                dropped.incrementAndGet();
                return;
              }
              if (SyncAddresses.STREAM.equals(ctx.message().address())
                  && isCatalogChange(ctx.body())
                  && catalogToDrop.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                catalogDropped.incrementAndGet();
                return;
              }
              ctx.next();
            });
  }

  @AfterAll
  void stopCluster() throws Exception {
    for (SyncTestNode n : new SyncTestNode[] {c, b, a}) {
      if (n != null) {
        n.close();
      }
    }
  }

  private static boolean isLoadStep(Object body) {
    if (!(body instanceof Buffer buf)) {
      return false;
    }
    String s = buf.toString();
    return s.contains("\"kind\":\"booked\"")
        || s.contains("\"kind\":\"freed\"")
        || s.contains("\"kind\":\"prefill_completed\"");
  }

  private static boolean isCatalogChange(Object body) {
    return body instanceof Buffer buf
        && (buf.toString().contains("\"kind\":\"upserted\"")
            || buf.toString().contains("\"kind\":\"removed\""));
  }

  private static long repaired(SyncTestNode n) {
    return ((Map<?, ?>) n.sync.json().get("catalog_repair")).get("workers_repaired")
            instanceof Long l
        ? l
        : -1;
  }

  /** A worker of block size 4; {@code maxBatched} null means a capacity no test reaches. */
  static WorkerSpec worker(long id, String model, Long maxBatched) {
    return WorkerSpec.builder(id)
        .modelName(model)
        .endpoint("http://w" + id)
        .blockSize(4)
        .maxNumBatchedTokens(maxBatched == null ? 1_000_000L : maxBatched)
        .build();
  }

  static SelectRequest request(String model, String id, int tokens) {
    int[] t = new int[tokens];
    for (int i = 0; i < tokens; i++) {
      t[i] = id.hashCode() + i;
    }
    return SelectRequest.of(new PartitionKey(model, null), PromptInput.tokens(t))
        .withSelectionId(id);
  }

  static <T> T join(CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** Active requests and prefill tokens of one worker as {@code /loads} of {@code s} shows them. */
  static PotentialLoad load(SelectionService s, String model, long worker) {
    for (var p : s.inspection().loads(model, null)) {
      for (PotentialLoad l : p.loads()) {
        if (l.workerId() == worker) {
          return l;
        }
      }
    }
    return null;
  }

  static int requests(SelectionService s, String model, long worker) {
    PotentialLoad l = load(s, model, worker);
    return l == null ? -1 : (int) l.activeRequests();
  }

  private void registerEverywhere(WorkerSpec w) throws Exception {
    join(a.service.upsertWorker(w));
    for (SyncTestNode n : List.of(b, c)) {
      await()
          .atMost(CONVERGED)
          .until(
              () ->
                  n.service.worker(w.workerId()) != null
                      && n.service.worker(w.workerId()).schedulable());
    }
  }

  @Test
  void loadConvergesAfterDroppedSyncMessages() throws Exception {
    registerEverywhere(worker(101, "drop", null));
    toDrop.set(3);
    int before = dropped.get();
    for (int i = 0; i < 3; i++) {
      join(a.service.select(request("drop", "drop-" + i, 16), true));
    }
    await().atMost(CONVERGED).until(() -> dropped.get() - before == 3);
    assertEquals(3, requests(a.service, "drop", 101));
    for (SyncTestNode n : List.of(b, c)) {
      await().atMost(CONVERGED).until(() -> requests(n.service, "drop", 101) == 3);
    }

    toDrop.set(2);
    join(a.service.free("drop-0"));
    join(a.service.free("drop-1"));
    await().atMost(CONVERGED).until(() -> dropped.get() - before == 5);
    for (SyncTestNode n : List.of(b, c)) {
      await().atMost(CONVERGED).until(() -> requests(n.service, "drop", 101) == 1);
      assertTrue(n.sync.stats().corrections.get() >= 1, "the views were repaired by digests");
    }
    join(a.service.free("drop-2"));
    for (SyncTestNode n : List.of(b, c)) {
      await().atMost(CONVERGED).until(() -> requests(n.service, "drop", 101) == 0);
    }
  }

  @Test
  void aFreeOnOneNodeServesARequestParkedOnAnother() throws Exception {
    registerEverywhere(worker(201, "queue", 16L));
    join(a.service.select(request("queue", "busy", 32), true));
    await()
        .atMost(CONVERGED)
        .until(() -> load(b.service, "queue", 201).potentialPrefillTokens() > 16);

    CompletionStage<Selection> parked = b.service.select(request("queue", "waiting", 32), true);
    assertFalse(parked.toCompletableFuture().isDone(), "b sees the worker busy with a's booking");
    assertEquals(1, b.service.inspection().loads("queue", null).get(0).pendingCount());

    join(a.service.free("busy"));
    Selection s = join(parked);
    assertEquals(201, s.workerId());
    assertEquals(0, b.service.inspection().loads("queue", null).get(0).pendingCount());
    await()
        .atMost(CONVERGED)
        .until(
            () -> requests(a.service, "queue", 201) == 1 && requests(c.service, "queue", 201) == 1);
    join(b.service.free("waiting"));
  }

  @Test
  void catalogChangesOnAnyNodeApplyOnEveryNode() throws Exception {
    join(a.service.upsertWorker(worker(301, "cat", null)));
    for (SyncTestNode n : List.of(b, c)) {
      await().atMost(CONVERGED).until(() -> n.service.worker(301) != null);
      Selection s = join(n.service.select(request("cat", "cat-on-" + n.id(), 8), false));
      assertEquals(301, s.workerId(), "the propagated worker is usable for selection");
    }

    join(c.service.patchWorker(301, w -> worker(301, "cat", 99L)));
    for (SyncTestNode n : List.of(a, b)) {
      await()
          .atMost(CONVERGED)
          .until(() -> Long.valueOf(99).equals(n.service.worker(301).spec().maxNumBatchedTokens()));
    }

    join(b.service.deleteWorker(301));
    for (SyncTestNode n : List.of(a, c)) {
      await().atMost(CONVERGED).until(() -> n.service.worker(301) == null);
    }
    assertNull(b.service.worker(301));
  }

  @Test
  void catalogChangesAPeerMissedAreRepairedFromTheDigest() throws Exception {
    long repairedB = repaired(b);
    long repairedC = repaired(c);
    int before = catalogDropped.get();
    catalogToDrop.set(1);
    join(a.service.upsertWorker(worker(601, "missed", null)));
    await().atMost(CONVERGED).until(() -> catalogDropped.get() - before == 1);
    for (SyncTestNode n : List.of(b, c)) {
      await().atMost(CONVERGED).until(() -> n.service.worker(601) != null);
    }
    assertTrue(
        repaired(b) > repairedB && repaired(c) > repairedC,
        "b and c pulled the upsert they never got: "
            + b.sync.json().get("catalog_repair")
            + " "
            + c.sync.json().get("catalog_repair"));

    catalogToDrop.set(1);
    join(a.service.deleteWorker(601));
    await().atMost(CONVERGED).until(() -> catalogDropped.get() - before == 2);
    for (SyncTestNode n : List.of(b, c)) {
      await().atMost(CONVERGED).until(() -> n.service.worker(601) == null);
    }
    await()
        .atMost(CONVERGED)
        .until(
            () ->
                a.service.catalogDigest() == b.service.catalogDigest()
                    && b.service.catalogDigest() == c.service.catalogDigest());
  }

  @Test
  void twoNodesChangingOneWorkerAtOnceEndWithTheSameCatalog() throws Exception {
    registerEverywhere(worker(701, "race", null));
    for (int round = 0; round < 5; round++) {
      long x = 1000 + round * 2;
      CompletionStage<?> onA = a.service.patchWorker(701, w -> worker(701, "race", x));
      CompletionStage<?> onB = b.service.patchWorker(701, w -> worker(701, "race", x + 1));
      join(onA);
      join(onB);
      await()
          .atMost(CONVERGED)
          .until(
              () ->
                  a.service.worker(701).spec().equals(b.service.worker(701).spec())
                      && b.service.worker(701).spec().equals(c.service.worker(701).spec()));
      Long won = a.service.worker(701).spec().maxNumBatchedTokens();
      assertTrue(won == x || won == x + 1, "one of the two patches won: " + won);
    }
    await()
        .atMost(CONVERGED)
        .until(
            () ->
                a.service.catalogDigest() == b.service.catalogDigest()
                    && b.service.catalogDigest() == c.service.catalogDigest());
  }

  @Test
  void badAndUnknownVersionMessagesAreCountedAndDropped() throws Exception {
    long unknownB = b.sync.stats().unknownVersion.get();
    long malformedB = b.sync.stats().malformed.get();
    long malformedC = c.sync.stats().malformed.get();
    a.vertx
        .eventBus()
        .publish(SyncAddresses.STREAM, new JsonObject().put("v", 99).put("kind", "booked"));
    a.vertx.eventBus().publish(SyncAddresses.STREAM, "not json at all");
    a.vertx
        .eventBus()
        .publish(
            SyncAddresses.STREAM,
            new JsonObject()
                .put("v", 1)
                .put("kind", "booked")
                .put("from", "forged")
                .put("seq", 1)
                .put("body", new JsonObject().put("id", 5)));
    await()
        .atMost(CONVERGED)
        .until(
            () ->
                b.sync.stats().unknownVersion.get() > unknownB
                    && b.sync.stats().malformed.get() >= malformedB + 2
                    && c.sync.stats().malformed.get() >= malformedC + 2);

    ExecutionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ExecutionException.class,
            () ->
                SyncTestNode.await(
                    a.vertx
                        .eventBus()
                        .request(
                            SyncAddresses.node(b.id()),
                            new JsonObject().put("v", 7).put("kind", "snapshot_open"),
                            new DeliveryOptions().setSendTimeout(10_000))));
    assertEquals(400, ((ReplyException) e.getCause()).failureCode());
    assertTrue(b.sync.stats().unknownVersion.get() >= unknownB + 2);

    registerEverywhere(worker(501, "after-bad", null));
    join(a.service.select(request("after-bad", "ok", 8), true));
    await().atMost(CONVERGED).until(() -> requests(b.service, "after-bad", 501) == 1);
    join(a.service.free("ok"));
  }

  @Test
  void aNodeDropsItsOwnStreamMessagesWithoutParsingThem() throws Exception {
    long malformedB = b.sync.stats().malformed.get();
    long malformedC = c.sync.stats().malformed.get();
    // junk that names b as its sender: b must not even parse it, c counts it as malformed
    a.vertx
        .eventBus()
        .publish(
            SyncAddresses.STREAM,
            "not json, from b",
            new DeliveryOptions().addHeader(SyncAddresses.FROM_HEADER, b.id()));
    a.vertx.eventBus().publish(SyncAddresses.STREAM, "not json, no sender");
    await()
        .atMost(CONVERGED)
        .until(
            () ->
                b.sync.stats().malformed.get() >= malformedB + 1
                    && c.sync.stats().malformed.get() >= malformedC + 2);
    assertEquals(
        malformedB + 1, b.sync.stats().malformed.get(), "b parsed a message naming itself");
  }

  @Test
  void aDeadNodesBookingsAreReleasedAfterTheGrace() throws Exception {
    registerEverywhere(worker(401, "dead", null));
    SyncTestNode d =
        SyncTestNode.start(cluster, PeerSyncOptions.withInterval(INTERVAL), ROUTER, false);
    try {
      assertNotNull(d.service.worker(401), "a joiner copies the catalog from a peer");
      assertEquals("done", d.sync.recovery().state());
      join(d.service.select(request("dead", "d-1", 8), true));
      join(d.service.select(request("dead", "d-2", 8), true));
      join(a.service.select(request("dead", "a-1", 8), true));
      for (SyncTestNode n : List.of(a, b, c)) {
        await().atMost(CONVERGED).until(() -> requests(n.service, "dead", 401) == 3);
      }
    } finally {
      d.close();
    }
    for (SyncTestNode n : List.of(a, b, c)) {
      await().atMost(CONVERGED).until(() -> requests(n.service, "dead", 401) == 1);
      assertTrue(
          n.sync.stats().bookingsReleased.get() >= 2,
          "released by the membership check, not by a message");
    }
    join(a.service.free("a-1"));
  }
}
