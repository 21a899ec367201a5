package io.kvselect.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * The local session table: {@link SessionAffinityContract}, plus what only the local table
 * promises (exact sizes and sweep counts, stages complete on return, room made by an expiry
 * without a sweep, the default capacity).
 */
class LocalSessionAffinityTest extends SessionAffinityContract {

  private static final String P = "model/default";

  @Override
  protected SessionAffinity table(MutableClock clock, int maxPerPartition) {
    return new LocalSessionAffinity(clock, TTL, maxPerPartition);
  }

  @Override
  protected SessionAffinity other(SessionAffinity t, MutableClock clock, int maxPerPartition) {
    return t;
  }

  private static <T> T done(CompletionStage<T> st) {
    assertTrue(st.toCompletableFuture().isDone(), "the local table completes before returning");
    return get(st);
  }

  @Test
  void sizeIsExactAndALookupNeverCreatesABinding() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL);
    assertEquals(Optional.empty(), done(t.lookup(P, "s1")));
    assertEquals(0, t.size(), "a lookup never creates a binding");
    done(t.bindAndLease(P, "s1", null, W1, "sel-1"));
    done(t.bindAndLease("other", "s2", null, W2, "sel-2"));
    done(t.bindAndLease(P, "s3", null, new WorkerRank(1, 5), "sel-3"));
    assertEquals(3, t.size());
    done(t.removeWorker(1));
    assertEquals(1, t.size());
    done(t.releaseLease("other", "s2", "sel-2"));
    clock.advance(TTL.minusMillis(1));
    assertEquals(0, done(t.sweep()), "nothing expired yet");
    clock.advance(Duration.ofMillis(1));
    assertEquals(1, done(t.sweep()), "the sweep counts what it removed");
    assertEquals(0, t.size());
  }

  @Test
  void anExpiredBindingMakesRoomWithoutASweep() {
    LocalSessionAffinity small = new LocalSessionAffinity(clock, TTL, 2);
    done(small.bindAndLease(P, "s1", null, W1, "l1"));
    done(small.bindAndLease(P, "s2", null, W1, "l2"));
    assertEquals(
        ErrorCode.NOT_READY, failure(() -> small.bindAndLease(P, "s3", null, W1, "l3")).code());
    done(small.releaseLease(P, "s1", "l1"));
    clock.advance(TTL);
    assertEquals(W1, done(small.bindAndLease(P, "s3", null, W1, "l3")));
    assertEquals(Optional.empty(), done(small.lookup(P, "s1")));
  }

  @Test
  void defaultCapacityIs65536PerPartition() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL);
    for (int i = 0; i < SessionAffinity.MAX_ENTRIES; i++) {
      done(t.bindAndLease(P, "s" + i, null, W1, "l" + i));
    }
    assertEquals(ErrorCode.NOT_READY, failure(() -> t.bindAndLease(P, "x", null, W1, "l")).code());
    assertEquals(SessionAffinity.MAX_ENTRIES, t.size());
  }

  @Test
  void refusedSessionIdsLeaveNothingBehind() {
    LocalSessionAffinity t = new LocalSessionAffinity(clock, TTL);
    done(t.bindAndLease(P, "a".repeat(256), null, W1, "l1"));
    for (String bad : new String[] {null, "", "a".repeat(257)}) {
      failure(() -> t.bindAndLease(P, bad, null, W1, "l"));
    }
    assertEquals(1, t.size());
  }
}
