package io.kvselect.core.session;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * What every {@link SessionAffinity} must do, run against each implementation (the local table
 * here, the Hazelcast map in {@code server/cluster}). A subclass says how to make a table and a
 * second handle on the same table (another member of a cluster; the same object locally). Every
 * test works in a partition of its own, so implementations whose state outlives a test (a
 * cluster's map) need no cleanup.
 */
public abstract class SessionAffinityContract {

  protected static final Duration TTL = Duration.ofSeconds(30);
  protected static final WorkerRank W1 = new WorkerRank(1, 0);
  protected static final WorkerRank W2 = new WorkerRank(2, 1);

  protected final MutableClock clock = new MutableClock();

  /** A table with idle TTL {@link #TTL}, at most {@code maxPerPartition} bindings per partition. */
  protected abstract SessionAffinity table(MutableClock clock, int maxPerPartition);

  /** A second handle on {@code t}'s state (another member's; locally {@code t} itself). */
  protected abstract SessionAffinity other(
      SessionAffinity t, MutableClock clock, int maxPerPartition);

  /** Rounds of the concurrent first-binding race (a cluster's round trips cost more). */
  protected int concurrentRounds() {
    return 200;
  }

  protected static String partition() {
    return "p-" + UUID.randomUUID();
  }

  protected static <T> T get(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw (RuntimeException) SelectionException.unwrap(e);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** The failure of a call, whether it throws or fails its stage. */
  protected static SelectionException failure(Supplier<CompletionStage<?>> call) {
    try {
      get(call.get());
    } catch (SelectionException e) {
      return e;
    }
    return fail("expected a SelectionException");
  }

  /** Books {@code target} as a booking on another rank does: expecting the current binding. */
  protected static WorkerRank book(
      SessionAffinity t, String p, String s, WorkerRank target, String lease) {
    WorkerRank current = get(t.lookup(p, s)).orElse(null);
    return get(t.bindAndLease(p, s, current, target, lease));
  }

  @Test
  public void bindingPinsTheSessionWithinItsPartitionOnly() {
    SessionAffinity a = table(clock, 100);
    String p = partition();
    assertEquals(Optional.empty(), get(a.lookup(p, "s1")));
    assertEquals(W1, book(a, p, "s1", W1, "sel-1"));
    assertEquals(Optional.of(W1), get(a.lookup(p, "s1")));
    assertEquals(
        Optional.of(W1), get(other(a, clock, 100).lookup(p, "s1")), "every handle reads it");
    assertEquals(Optional.empty(), get(a.lookup(p + "x", "s1")), "partitions are separate tables");
  }

  @Test
  public void compareAndBindHasOneWinnerWhicheverHandleAsks() {
    SessionAffinity a = table(clock, 100);
    SessionAffinity b = other(a, clock, 100);
    String p = partition();
    assertEquals(W1, get(a.bindAndLease(p, "s", null, W1, "l1")));
    assertEquals(W1, get(b.bindAndLease(p, "s", null, W2, "l2")), "the loser learns the winner");
    assertEquals(Optional.of(W1), get(b.lookup(p, "s")));
    get(a.releaseLease(p, "s", "l1"));
    clock.advance(TTL);
    assertEquals(
        Optional.empty(),
        get(a.lookup(p, "s")),
        "the loser added no lease, so the binding expired with the winner's");
  }

  @Test
  public void compareAndBindRetargetsOnlyFromTheExpectedRank() {
    SessionAffinity a = table(clock, 100);
    SessionAffinity b = other(a, clock, 100);
    String p = partition();
    get(a.bindAndLease(p, "s1", null, W1, "a"));
    WorkerRank w3 = new WorkerRank(3, 0);
    assertEquals(
        W1, get(b.bindAndLease(p, "s1", W2, w3, "b")), "an unexpected current binding stays");
    assertEquals(
        w3, get(b.bindAndLease(p, "s1", W1, w3, "c")), "expecting the current binding moves it");
    assertEquals(
        w3,
        get(a.bindAndLease(p, "s1", null, w3, "d")),
        "binding to the current target succeeds whatever was expected");
    assertEquals(Optional.of(w3), get(a.lookup(p, "s1")));
  }

  @Test
  public void idleTtlRunsFromTheLastReleaseAndSweepRemovesExpiredBindings() {
    SessionAffinity a = table(clock, 100);
    String p = partition();
    book(a, p, "s", W1, "l1");
    book(a, p, "s", W1, "l2");
    clock.advance(TTL.multipliedBy(5));
    get(a.sweep());
    assertEquals(
        Optional.of(W1), get(a.lookup(p, "s")), "a leased binding never expires, swept or not");
    get(a.releaseLease(p, "s", "l1"));
    clock.advance(TTL.multipliedBy(5));
    assertEquals(Optional.of(W1), get(a.lookup(p, "s")), "l2 still holds it");
    get(a.releaseLease(p, "s", "l2"));
    clock.advance(TTL.minusMillis(1));
    get(a.sweep());
    assertEquals(Optional.of(W1), get(a.lookup(p, "s")), "live until the TTL, swept or not");
    clock.advance(Duration.ofMillis(1));
    assertEquals(
        Optional.empty(), get(a.lookup(p, "s")), "expired reads as absent before any sweep");
    assertEquals(W2, book(a, p, "s", W2, "l3"), "a new booking replaces an expired binding");
    assertEquals(Optional.of(W2), get(a.lookup(p, "s")));
    get(a.releaseLease(p, "s", "l3"));
    clock.advance(TTL);
    assertTrue(get(a.sweep()) >= 1, "the sweep removed the expired binding");
    assertEquals(Optional.empty(), get(other(a, clock, 100).lookup(p, "s")));
  }

  @Test
  public void unknownReleasesChangeNothing() {
    SessionAffinity a = table(clock, 100);
    String p = partition();
    book(a, p, "s1", W1, "sel-1");
    get(a.releaseLease(p, "s1", "never-leased"));
    get(a.releaseLease(p, "nope", "sel-1"));
    get(a.releaseLease(p + "nope", "s1", "sel-1"));
    clock.advance(TTL.multipliedBy(3));
    assertEquals(Optional.of(W1), get(a.lookup(p, "s1")));
  }

  @Test
  public void aWorkerLeavingDropsItsBindingsEverywhereAndTheSessionRebinds() {
    SessionAffinity a = table(clock, 100);
    String p = partition();
    String q = partition();
    long gone = 1000 + (UUID.randomUUID().getLeastSignificantBits() & 0xffff);
    book(a, p, "s1", new WorkerRank(gone, 0), "sel-1");
    book(a, p, "s2", new WorkerRank(gone, 5), "sel-2");
    book(a, q, "s3", W2, "sel-3");
    book(a, p, "s4", W1, "sel-5");
    get(other(a, clock, 100).removeWorker(gone));
    assertEquals(Optional.empty(), get(a.lookup(p, "s1")));
    assertEquals(Optional.empty(), get(a.lookup(p, "s2")), "every rank of the worker");
    assertEquals(Optional.of(W2), get(a.lookup(q, "s3")), "other workers keep theirs");
    assertEquals(Optional.of(W1), get(a.lookup(p, "s4")), "in the same partition too");

    assertEquals(W2, book(a, p, "s1", W2, "sel-4"));
    get(a.releaseLease(p, "s1", "sel-1"));
    clock.advance(TTL.multipliedBy(2));
    assertEquals(Optional.of(W2), get(a.lookup(p, "s1")), "a stale release keeps the new lease");
  }

  @Test
  public void aBookingOnAnotherRankRetargetsAndKeepsLeases() {
    SessionAffinity a = table(clock, 100);
    String p = partition();
    book(a, p, "s1", W1, "sel-1");
    assertEquals(W2, book(a, p, "s1", W2, "sel-2"));
    assertEquals(Optional.of(W2), get(a.lookup(p, "s1")));
    get(a.releaseLease(p, "s1", "sel-2"));
    clock.advance(TTL.multipliedBy(2));
    assertEquals(Optional.of(W2), get(a.lookup(p, "s1")), "sel-1 still holds the binding");
  }

  @Test
  public void aFullTableRefusesNewSessionsWith503ButKeepsServingBoundOnes() {
    SessionAffinity a = table(clock, 2);
    String p = partition();
    book(a, p, "s1", W1, "l1");
    book(a, p, "s2", W1, "l2");
    SelectionException full = failure(() -> a.bindAndLease(p, "s3", null, W2, "l3"));
    assertEquals(ErrorCode.NOT_READY, full.code());
    assertEquals("session affinity table is full", full.getMessage());
    assertEquals(Optional.empty(), get(a.lookup(p, "s3")), "the refused booking changed nothing");
    assertEquals(W2, book(a, p, "s2", W2, "l4"), "a bound session still books, and may move");
    assertEquals(W1, book(a, partition(), "s3", W1, "l5"), "the cap is per partition");

    get(a.releaseLease(p, "s1", "l1"));
    clock.advance(TTL);
    get(a.sweep());
    assertEquals(W1, book(a, p, "s3", W1, "l3"), "an expired binding makes room");
    assertEquals(Optional.empty(), get(a.lookup(p, "s1")));
  }

  @Test
  public void sessionIdsAreOneTo256BytesOfUtf8AndAnythingElseIs400() {
    SessionAffinity a = table(clock, 100);
    String p = partition();
    assertDoesNotThrow(() -> book(a, p, "a".repeat(256), W1, "l1"));
    assertDoesNotThrow(() -> book(a, p, "\u20ac".repeat(85), W1, "l2"));
    for (String bad : new String[] {null, "", "a".repeat(257), "\u20ac".repeat(86)}) {
      SelectionException e = failure(() -> a.bindAndLease(p, bad, null, W1, "l"));
      assertEquals(ErrorCode.BAD_REQUEST, e.code());
      assertTrue(e.getMessage().contains("session_id"), e.getMessage());
      assertEquals(ErrorCode.BAD_REQUEST, failure(() -> a.lookup(p, bad)).code());
    }
    assertEquals(Optional.of(W1), get(a.lookup(p, "a".repeat(256))));
  }

  @Test
  public void concurrentFirstBindingsAgreeOnOneRank() throws Exception {
    SessionAffinity a = table(clock, 100_000);
    List<SessionAffinity> handles = List.of(a, other(a, clock, 100_000));
    String p = partition();
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < concurrentRounds(); round++) {
        String session = "s" + round;
        CountDownLatch start = new CountDownLatch(1);
        List<Future<WorkerRank>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          WorkerRank mine = new WorkerRank(t, 0);
          String lease = session + "-" + t;
          SessionAffinity h = handles.get(t % handles.size());
          results.add(
              pool.submit(
                  () -> {
                    start.await();
                    return get(h.bindAndLease(p, session, null, mine, lease));
                  }));
        }
        start.countDown();
        Set<WorkerRank> seen = new HashSet<>();
        for (Future<WorkerRank> f : results) {
          seen.add(f.get(30, TimeUnit.SECONDS));
        }
        assertEquals(1, seen.size(), "every caller learns the same winner");
        assertEquals(Optional.of(seen.iterator().next()), get(a.lookup(p, session)));
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
