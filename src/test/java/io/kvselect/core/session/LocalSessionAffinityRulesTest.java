package io.kvselect.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** Argument rules, failed stages, counts and table housekeeping of the local session table. */
class LocalSessionAffinityRulesTest {

  private static final Duration TTL = Duration.ofSeconds(30);
  private static final WorkerRank W1 = new WorkerRank(1, 0);
  private static final WorkerRank W2 = new WorkerRank(2, 0);
  private final MutableClock clock = new MutableClock();

  private static <T> T done(CompletionStage<T> st) {
    CompletableFuture<T> f = st.toCompletableFuture();
    assertTrue(f.isDone(), "the local table completes before returning");
    return f.join();
  }

  private static Throwable failed(CompletionStage<?> st) {
    CompletableFuture<?> f = st.toCompletableFuture();
    assertTrue(f.isCompletedExceptionally(), "a failure is a failed stage, not a throw");
    return SelectionException.unwrap(assertThrows(CompletionException.class, f::join));
  }

  @Test
  void constructorRejectsNonPositiveLimits() {
    assertThrows(NullPointerException.class, () -> new LocalSessionAffinity(null, TTL));
    assertThrows(IllegalArgumentException.class, () -> new LocalSessionAffinity(clock, null));
    assertThrows(
        IllegalArgumentException.class, () -> new LocalSessionAffinity(clock, Duration.ZERO));
    assertThrows(
        IllegalArgumentException.class,
        () -> new LocalSessionAffinity(clock, Duration.ofSeconds(-1)));
    assertThrows(IllegalArgumentException.class, () -> new LocalSessionAffinity(clock, TTL, 0));
    LocalSessionAffinity one = new LocalSessionAffinity(clock, Duration.ofMillis(1), 1);
    assertEquals(W1, done(one.bindAndLease("p", "s", null, W1, "l")));
    assertEquals(1, one.size());
  }

  @Test
  void invalidArgumentsFailTheStage() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL);
    SelectionException bad = assertInstanceOf(SelectionException.class, failed(t.lookup("p", "")));
    assertEquals(ErrorCode.BAD_REQUEST, bad.code());
    assertEquals("session_id must not be empty", bad.getMessage());
    assertInstanceOf(SelectionException.class, failed(t.bindAndLease("p", null, null, W1, "l")));
    assertInstanceOf(NullPointerException.class, failed(t.bindAndLease(null, "s", null, W1, "l")));
    assertInstanceOf(NullPointerException.class, failed(t.bindAndLease("p", "s", null, null, "l")));
    assertInstanceOf(NullPointerException.class, failed(t.bindAndLease("p", "s", null, W1, null)));
    assertInstanceOf(NullPointerException.class, failed(t.lookup(null, "s")));
    assertEquals(0, t.size());
    SelectionException longId =
        assertThrows(
            SelectionException.class, () -> SessionAffinity.requireValidSessionId("a".repeat(257)));
    assertEquals("session_id must be at most 256 bytes of UTF-8", longId.getMessage());
  }

  @Test
  void sweepAndRemoveCountAcrossPartitions() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL);
    done(t.bindAndLease("a", "s1", null, W1, "l1"));
    done(t.bindAndLease("a", "s2", null, W2, "l2"));
    done(t.bindAndLease("b", "s1", null, W1, "l3"));
    done(t.bindAndLease("b", "s3", null, W1, "l4"));
    assertEquals(4, t.size());
    done(t.releaseLease("a", "s1", "l1"));
    done(t.releaseLease("b", "s1", "l3"));
    done(t.releaseLease("a", "s2", "l2"));
    clock.advance(TTL.minusMillis(1));
    assertEquals(0, done(t.sweep()));
    clock.advance(Duration.ofMillis(1));
    assertEquals(3, done(t.sweep()));
    assertEquals(1, t.size());
    assertEquals(Optional.of(W1), done(t.lookup("b", "s3")));
    done(t.removeWorker(1));
    assertEquals(0, t.size());
    assertEquals(0, done(t.sweep()));
  }

  @Test
  void anExpiredBindingMetByLookupOrBindIsDropped() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL);
    done(t.bindAndLease("a", "s1", null, W1, "l1"));
    done(t.bindAndLease("a", "s2", null, W1, "l2"));
    done(t.releaseLease("a", "s1", "l1"));
    clock.advance(TTL);
    assertEquals(Optional.empty(), done(t.lookup("a", "s1")));
    assertEquals(1, t.size(), "the lookup dropped the expired binding");
    done(t.releaseLease("a", "s2", "l2"));
    clock.advance(TTL);
    assertEquals(
        W2,
        done(t.bindAndLease("a", "s2", null, W2, "l3")),
        "an expired binding counts as unbound: a first binding re-creates it");
    assertEquals(1, t.size());
    done(t.releaseLease("a", "s2", "l3"));
    clock.advance(TTL);
    assertEquals(Optional.empty(), done(t.lookup("a", "s2")));
    assertEquals(0, t.size());
    assertEquals(
        Optional.empty(), done(t.lookup("a", "s2")), "an emptied partition table reads as absent");
  }

  /**
   * The contract of {@code bindAndLease}: the result is the binding in effect afterwards. A
   * caller that looked up W1 while the binding was alive and binds after it expired (or after
   * its worker was removed) finds no binding: nobody else won, so it binds W2 with its lease.
   */
  @Test
  void theResultIsTheBindingInEffectEvenWhenTheExpectedOneExpired() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL);
    done(t.bindAndLease("a", "s", null, W1, "l1"));
    done(t.releaseLease("a", "s", "l1"));
    clock.advance(TTL);
    WorkerRank result = done(t.bindAndLease("a", "s", W1, W2, "l2"));
    assertEquals(Optional.ofNullable(result), done(t.lookup("a", "s")));
    done(t.bindAndLease("b", "s", null, W1, "l3"));
    done(t.removeWorker(1));
    WorkerRank afterRemoval = done(t.bindAndLease("b", "s", W1, W1, "l4"));
    assertEquals(Optional.ofNullable(afterRemoval), done(t.lookup("b", "s")));
  }

  @Test
  void reAddingAHeldLeaseIsANoOp() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL);
    done(t.bindAndLease("a", "s", null, W1, "l"));
    done(t.bindAndLease("a", "s", W1, W1, "l"));
    done(t.releaseLease("a", "s", "l"));
    clock.advance(TTL);
    assertEquals(Optional.empty(), done(t.lookup("a", "s")), "one release ends the single lease");
  }

  @Test
  void aFullTableSweepsOnlyExpiredBindings() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL, 3);
    done(t.bindAndLease("a", "s1", null, W1, "l1"));
    done(t.bindAndLease("a", "s2", null, W1, "l2"));
    done(t.bindAndLease("a", "s3", null, W1, "l3"));
    done(t.releaseLease("a", "s1", "l1"));
    clock.advance(TTL);
    assertEquals(W2, done(t.bindAndLease("a", "s4", null, W2, "l4")));
    assertEquals(3, t.size());
    assertEquals(Optional.of(W1), done(t.lookup("a", "s2")), "live bindings survive the sweep");
    assertEquals(Optional.of(W1), done(t.lookup("a", "s3")));
    SelectionException full =
        assertInstanceOf(
            SelectionException.class, failed(t.bindAndLease("a", "s5", null, W2, "l5")));
    assertEquals(ErrorCode.NOT_READY, full.code());
  }
}
