package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.load.LoadEvent;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The forwarding decision: a lifecycle call for a booking this node holds is applied here; one it
 * does not hold goes to the {@link LifecycleForwarder} with the origin the load view knows (null
 * when unknown), after the input is checked; {@link SelectionService#applyForwarded} never
 * forwards; without a forwarder the answer stays 404.
 */
class LifecycleForwardingTest {

  private record Call(String origin, LifecycleStep step) {}

  private final ServiceFixture fa = new ServiceFixture();
  private final ServiceFixture fb = new ServiceFixture();
  private final List<Call> calls = new CopyOnWriteArrayList<>();

  /** Node B forwards to node A directly, as the transport would; the calls are recorded. */
  private SelectionService nodeA;

  private SelectionService nodeB;

  private void twoNodes() {
    nodeA = fa.service(ServiceFixture.approximate(), null);
    nodeB =
        fb.builder(ServiceFixture.approximate(), null)
            .lifecycleForwarder(
                (origin, step) -> {
                  calls.add(new Call(origin, step));
                  return nodeA.applyForwarded(step);
                })
            .build();
    for (SelectionService s : List.of(nodeA, nodeB)) {
      join(s.upsertWorker(ServiceFixture.worker(1, 4)));
    }
  }

  private static ErrorCode failure(Runnable r) {
    RuntimeException e = assertThrows(RuntimeException.class, r::run);
    return ((SelectionException) SelectionException.unwrap(e)).code();
  }

  @Test
  void aStepForABookingHeldElsewhereGoesToItsOrigin() {
    twoNodes();
    join(nodeA.select(ServiceFixture.req("r1", 1, 2, 3, 4, 5, 6, 7, 8), true));
    // B has not heard of it: forwarded with an unknown origin
    join(nodeB.prefillComplete("r1"));
    assertEquals(new Call(null, new LifecycleStep.PrefillComplete("r1")), calls.get(0));
    // B hears of it from A's sync: forwarded to A by name
    for (LoadEvent e : fa.loadEvents) {
      nodeB.applyPeerLoad("node-a", e);
    }
    join(nodeB.outputBlock("r1", 0.5));
    assertEquals(new Call("node-a", new LifecycleStep.OutputBlock("r1", 0.5)), calls.get(1));
    assertEquals(
        ErrorCode.BAD_REQUEST,
        failure(() -> join(nodeB.outputBlock("r1", 3.0))),
        "a bad decay fraction is refused before anything is forwarded");
    assertEquals(2, calls.size());
    join(nodeB.free("r1"));
    assertEquals(new Call("node-a", new LifecycleStep.Free("r1")), calls.get(2));
    assertEquals(0, nodeA.bookingCount());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(nodeB.free("r1"))));
    assertEquals(
        ErrorCode.NOT_FOUND,
        failure(() -> join(nodeA.applyForwarded(new LifecycleStep.Free("r1")))));
  }

  @Test
  void aBookingHeldHereIsNeverForwarded() {
    twoNodes();
    join(nodeB.select(ServiceFixture.req("mine", 1, 2, 3, 4, 5, 6, 7, 8), true));
    join(nodeB.prefillComplete("mine"));
    join(nodeB.outputBlock("mine", null));
    join(nodeB.free("mine"));
    assertTrue(calls.isEmpty(), String.valueOf(calls));
  }

  @Test
  void withoutAForwarderAnUnknownBookingIs404AtOnce() {
    SelectionService single = fa.service(ServiceFixture.approximate(), null);
    CompletableFuture<Void> f = single.free("nobody").toCompletableFuture();
    assertTrue(f.isDone(), "answered without waiting");
    assertEquals(ErrorCode.NOT_FOUND, failure(f::join));
  }
}
