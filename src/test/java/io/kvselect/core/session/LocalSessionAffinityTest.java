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
  private final LocalSessionAffinity affinity = new LocalSessionAffinity(clock, TTL);

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
    var small = new LocalSessionAffinity(clock, TTL, 2);
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
}
