package io.kvselect.server.sync.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.session.LocalSessionAffinity;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Version order and announcements of {@link ReplicatedAffinity} over the local table. */
class ReplicatedAffinityTest {

  private static final String P = "default:default";
  private static final long ME = 7;
  private static final WorkerRank R1 = new WorkerRank(1, 0);
  private static final WorkerRank R2 = new WorkerRank(2, 0);

  private final MutableClock clock = new MutableClock();
  private final LocalSessionAffinity table =
      new LocalSessionAffinity(clock, Duration.ofSeconds(60));
  private final List<ReplicaWire.AffinityEvent> published = new ArrayList<>();
  private final ReplicatedAffinity a = new ReplicatedAffinity(table, ME, published::add);

  private static ReplicaWire.AffinityEvent remote(
      String session, WorkerRank r, long seq, long writer) {
    return new ReplicaWire.AffinityEvent(
        "default", "default", session, r.workerId(), r.dpRank(), seq, writer);
  }

  private Optional<WorkerRank> lookup(String session) {
    return table.lookup(P, session).toCompletableFuture().join();
  }

  private boolean apply(ReplicaWire.AffinityEvent e) {
    return a.apply(e).toCompletableFuture().join();
  }

  @Test
  void newBindingsAndMovesAreAnnouncedHoldingIsNot() {
    assertEquals(R1, a.bindAndLease(P, "s", null, R1, "l1").toCompletableFuture().join());
    assertEquals(List.of(remote("s", R1, 1, ME)), published);
    a.bindAndLease(P, "s", R1, R1, "l2").toCompletableFuture().join();
    assertEquals(1, published.size(), "holding the binding is not news");
    a.bindAndLease(P, "s", R1, R2, "l3").toCompletableFuture().join();
    assertEquals(remote("s", R2, 2, ME), published.get(1));
    // a lost race (expected none, another target bound) announces nothing
    assertEquals(R2, a.bindAndLease(P, "s", null, R1, "l4").toCompletableFuture().join());
    assertEquals(2, published.size());
  }

  @Test
  void replicaBindingsApplyInSequenceThenWriterOrder() {
    assertTrue(apply(remote("s", R1, 5, 10)));
    assertEquals(Optional.of(R1), lookup("s"));
    assertFalse(apply(remote("s", R2, 4, 99)), "lower sequence");
    assertFalse(apply(remote("s", R2, 5, 10)), "same version");
    assertFalse(apply(remote("s", R2, 5, 9)), "same sequence, lower writer");
    assertEquals(Optional.of(R1), lookup("s"));
    assertTrue(
        apply(remote("s", R2, 5, -1L)), "writer ids compare unsigned: u64::MAX is the highest");
    assertEquals(Optional.of(R2), lookup("s"));
    assertTrue(published.isEmpty(), "replica bindings are not echoed");
  }

  @Test
  void aLocalMoveAfterAReplicaBindingOutranksIt() {
    assertTrue(apply(remote("s", R1, 5, 10)));
    a.bindAndLease(P, "s", R1, R2, "l1").toCompletableFuture().join();
    assertEquals(remote("s", R2, 6, ME), published.get(0));
    assertFalse(apply(remote("s", R1, 5, 11)), "older than the local move (6, ME)");
    assertEquals(Optional.of(R2), lookup("s"));
  }

  @Test
  void aReplicaBindingHoldsNoLeaseSoItsIdleTtlRunsAtOnce() {
    assertTrue(apply(remote("s", R1, 1, 10)));
    clock.advance(Duration.ofSeconds(61));
    assertEquals(Optional.empty(), lookup("s"));
  }
}
