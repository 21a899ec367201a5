package io.kvselect.core.session;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LocalSessionAffinityTest {

  private static final Duration TTL = Duration.ofSeconds(30);
  private static final String P = "model/default";
  private static final WorkerRank W1 = new WorkerRank(1, 0);
  private static final WorkerRank W2 = new WorkerRank(2, 1);

  private final MutableClock clock = new MutableClock();
  private final SyncAffinity affinity = new SyncAffinity(new LocalSessionAffinity(clock, TTL));

  @Test
  void bindingPinsTheSessionWithinItsPartitionOnly() {
    assertEquals(Optional.empty(), affinity.lookup(P, "s1"));
    assertEquals(0, affinity.size(), "a lookup never creates a binding");

    affinity.bindAndLease(P, "s1", W1, "sel-1");
    assertEquals(Optional.of(W1), affinity.lookup(P, "s1"));
    assertEquals(Optional.empty(), affinity.lookup("other/default", "s1"));
    assertEquals(1, affinity.size());
  }

  @Test
  void aHeldLeaseKeepsTheBindingAlivePastTheTtl() {
    affinity.bindAndLease(P, "s1", W1, "sel-1");
    clock.advance(TTL.multipliedBy(10));
    assertEquals(0, affinity.sweep());
    assertEquals(Optional.of(W1), affinity.lookup(P, "s1"));
  }

  @Test
  void idleTtlStartsWhenTheLastLeaseIsReleased() {
    affinity.bindAndLease(P, "s1", W1, "sel-1");
    affinity.bindAndLease(P, "s1", W1, "sel-2");
    affinity.releaseLease(P, "s1", "sel-1");
    clock.advance(TTL.multipliedBy(2));
    assertEquals(Optional.of(W1), affinity.lookup(P, "s1"), "sel-2 still holds it");

    affinity.releaseLease(P, "s1", "sel-2");
    clock.advance(TTL.minusMillis(1));
    assertEquals(0, affinity.sweep());
    assertEquals(Optional.of(W1), affinity.lookup(P, "s1"));

    clock.advance(Duration.ofMillis(1));
    assertEquals(1, affinity.sweep());
    assertEquals(Optional.empty(), affinity.lookup(P, "s1"));
    assertEquals(0, affinity.size());
  }

  @Test
  void expiredBindingReadsAbsentBeforeAnySweep() {
    affinity.bindAndLease(P, "s1", W1, "sel-1");
    affinity.releaseLease(P, "s1", "sel-1");
    clock.advance(TTL);
    assertEquals(Optional.empty(), affinity.lookup(P, "s1"));

    affinity.bindAndLease(P, "s1", W2, "sel-2");
    assertEquals(Optional.of(W2), affinity.lookup(P, "s1"), "an expired binding re-initializes");
  }

  @Test
  void unknownReleasesChangeNothing() {
    affinity.bindAndLease(P, "s1", W1, "sel-1");
    affinity.releaseLease(P, "s1", "never-leased");
    affinity.releaseLease(P, "nope", "sel-1");
    affinity.releaseLease("nope", "s1", "sel-1");
    clock.advance(TTL.multipliedBy(3));
    assertEquals(Optional.of(W1), affinity.lookup(P, "s1"));
  }

  @Test
  void aWorkerLeavingDropsItsBindingsAndTheSessionRebinds() {
    affinity.bindAndLease(P, "s1", W1, "sel-1");
    affinity.bindAndLease(P, "s2", new WorkerRank(1, 5), "sel-2");
    affinity.bindAndLease("other", "s3", W2, "sel-3");

    affinity.removeWorker(1);
    assertEquals(Optional.empty(), affinity.lookup(P, "s1"));
    assertEquals(Optional.empty(), affinity.lookup(P, "s2"));
    assertEquals(Optional.of(W2), affinity.lookup("other", "s3"));
    assertEquals(1, affinity.size());

    affinity.bindAndLease(P, "s1", W2, "sel-4");
    assertEquals(Optional.of(W2), affinity.lookup(P, "s1"));
    affinity.releaseLease(P, "s1", "sel-1");
    clock.advance(TTL.multipliedBy(2));
    assertEquals(Optional.of(W2), affinity.lookup(P, "s1"), "a stale release keeps the new lease");
  }

  @Test
  void aBookingOnAnotherRankRetargetsAndKeepsLeases() {
    affinity.bindAndLease(P, "s1", W1, "sel-1");
    affinity.bindAndLease(P, "s1", W2, "sel-2");
    assertEquals(Optional.of(W2), affinity.lookup(P, "s1"));

    affinity.releaseLease(P, "s1", "sel-2");
    clock.advance(TTL.multipliedBy(2));
    assertEquals(Optional.of(W2), affinity.lookup(P, "s1"), "sel-1 still holds the binding");
  }

  @Test
  void aFullTableRejectsNewSessionsUntilOneExpires() {
    var small = new SyncAffinity(new LocalSessionAffinity(clock, TTL, 2));
    small.bindAndLease(P, "s1", W1, "l1");
    small.bindAndLease(P, "s2", W1, "l2");
    SelectionException e =
        assertThrows(SelectionException.class, () -> small.bindAndLease(P, "s3", W1, "l3"));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertEquals("session affinity table is full", e.getMessage());

    assertDoesNotThrow(() -> small.bindAndLease(P, "s2", W2, "l4"), "existing sessions rebind");
    assertDoesNotThrow(() -> small.bindAndLease("other", "s3", W1, "l5"), "per-partition cap");

    small.releaseLease(P, "s1", "l1");
    clock.advance(TTL);
    small.bindAndLease(P, "s3", W1, "l3");
    assertEquals(Optional.of(W1), small.lookup(P, "s3"));
    assertEquals(Optional.empty(), small.lookup(P, "s1"));
  }

  @Test
  void defaultCapacityIs65536PerPartition() {
    for (int i = 0; i < SessionAffinity.MAX_ENTRIES; i++) {
      affinity.bindAndLease(P, "s" + i, W1, "l" + i);
    }
    SelectionException e =
        assertThrows(SelectionException.class, () -> affinity.bindAndLease(P, "x", W1, "l"));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertEquals(SessionAffinity.MAX_ENTRIES, affinity.size());
  }

  @Test
  void sessionIdMustBeOneTo256BytesOfUtf8() {
    assertDoesNotThrow(() -> affinity.bindAndLease(P, "a".repeat(256), W1, "l1"));
    assertDoesNotThrow(() -> affinity.bindAndLease(P, "\u20ac".repeat(85), W1, "l2"));
    for (String bad : new String[] {null, "", "a".repeat(257), "\u20ac".repeat(86)}) {
      SelectionException e =
          assertThrows(SelectionException.class, () -> affinity.bindAndLease(P, bad, W1, "l"));
      assertEquals(ErrorCode.BAD_REQUEST, e.code());
      assertTrue(e.getMessage().contains("session_id"), e.getMessage());
      assertThrows(SelectionException.class, () -> affinity.lookup(P, bad));
    }
    assertEquals(2, affinity.size());
  }

  @Test
  void compareAndBindLetsExactlyOneFirstBookingWin() {
    LocalSessionAffinity table = new LocalSessionAffinity(clock, TTL);
    assertEquals(W1, table.bindAndLease(P, "s1", null, W1, "a").toCompletableFuture().join());
    assertEquals(W1, table.bindAndLease(P, "s1", null, W2, "b").toCompletableFuture().join(),
        "a second first-binding loses and learns the winner");
    table.releaseLease(P, "s1", "a");
    clock.advance(TTL);
    assertEquals(Optional.empty(), table.lookup(P, "s1").toCompletableFuture().join(),
        "the loser added no lease, so the binding expired with the winner's");
  }

  @Test
  void compareAndBindRetargetsOnlyFromTheExpectedRank() {
    LocalSessionAffinity table = new LocalSessionAffinity(clock, TTL);
    table.bindAndLease(P, "s1", null, W1, "a");
    WorkerRank w3 = new WorkerRank(3, 0);
    assertEquals(W1, table.bindAndLease(P, "s1", W2, w3, "b").toCompletableFuture().join());
    assertEquals(w3, table.bindAndLease(P, "s1", W1, w3, "c").toCompletableFuture().join());
    assertEquals(w3, table.bindAndLease(P, "s1", null, w3, "d").toCompletableFuture().join(),
        "binding to the current target succeeds whatever was expected");
    assertEquals(Optional.of(w3), table.lookup(P, "s1").toCompletableFuture().join());
  }

  @Test
  void concurrentFirstBindingsAgreeOnOneRank() throws Exception {
    LocalSessionAffinity table = new LocalSessionAffinity(clock, TTL);
    int threads = 4;
    var pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 200; round++) {
        String session = "s" + round;
        var start = new java.util.concurrent.CountDownLatch(1);
        java.util.List<java.util.concurrent.Future<WorkerRank>> results = new java.util.ArrayList<>();
        for (int t = 0; t < threads; t++) {
          WorkerRank mine = new WorkerRank(t, 0);
          String lease = session + "-" + t;
          results.add(pool.submit(() -> {
            start.await();
            return table.bindAndLease(P, session, null, mine, lease).toCompletableFuture().join();
          }));
        }
        start.countDown();
        java.util.Set<WorkerRank> seen = new java.util.HashSet<>();
        for (var f : results) {
          seen.add(f.get(10, java.util.concurrent.TimeUnit.SECONDS));
        }
        assertEquals(1, seen.size(), "every caller learns the same winner");
        assertEquals(Optional.of(seen.iterator().next()), table.lookup(P, session).toCompletableFuture().join());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** The table driven synchronously, re-targeting like a booking on another rank does. */
  private static final class SyncAffinity {
    private final LocalSessionAffinity table;

    SyncAffinity(LocalSessionAffinity table) {
      this.table = table;
    }

    Optional<WorkerRank> lookup(String p, String s) {
      return join(table.lookup(p, s));
    }

    void bindAndLease(String p, String s, WorkerRank target, String lease) {
      WorkerRank current = s == null || s.isEmpty() ? null : join(table.lookup(p, s)).orElse(null);
      join(table.bindAndLease(p, s, current, target, lease));
    }

    void releaseLease(String p, String s, String lease) {
      join(table.releaseLease(p, s, lease));
    }

    int sweep() {
      return join(table.sweep());
    }

    void removeWorker(long id) {
      join(table.removeWorker(id));
    }

    int size() {
      return table.size();
    }

    private static <T> T join(java.util.concurrent.CompletionStage<T> st) {
      try {
        return st.toCompletableFuture().join();
      } catch (java.util.concurrent.CompletionException e) {
        throw (RuntimeException) SelectionException.unwrap(e);
      }
    }
  }
}
