package io.kvselect.server.sync.replica;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import org.junit.jupiter.api.Test;

/**
 * A booking's later steps carry only its id: {@link ReplicaSteps} gives them the rank and block
 * size the booking was published with, forgets the booking at its free, and publishes nothing for
 * a step of a booking it never saw (a peer's, or one made before the mesh started).
 */
class ReplicaStepsTest {

  private static final PartitionKey P = new PartitionKey("m", "g");

  @Test
  void laterStepsNameTheBookedRankAndBlockSizeAndTheFreeForgetsTheBooking() {
    ReplicaSteps steps = new ReplicaSteps(42);
    ReplicaWire.SequenceEvent add =
        steps.toWire(
            new LoadEvent.Booked(
                P, "r-1", new WorkerRank(7, 3), new long[] {11, 12}, 32, 16, 64, true, 32));
    assertEquals(ReplicaWire.Kind.ADD_REQUEST, add.kind());
    assertEquals(7, add.workerId());
    assertEquals(3, add.dpRank());
    assertEquals(16, add.blockSize());
    assertEquals(42, add.routerId());
    assertArrayEquals(new long[] {11, 12}, add.tokenSequence());
    assertEquals(1, steps.open());

    ReplicaWire.SequenceEvent prefill = steps.toWire(new LoadEvent.PrefillCompleted(P, "r-1"));
    assertEquals(ReplicaWire.Kind.MARK_PREFILL_COMPLETED, prefill.kind());
    assertEquals(7, prefill.workerId());
    assertEquals(3, prefill.dpRank());
    assertEquals(16, prefill.blockSize());
    assertEquals(1, steps.open(), "a prefill completion keeps the booking");

    ReplicaWire.SequenceEvent free = steps.toWire(new LoadEvent.Freed(P, "r-1"));
    assertEquals(ReplicaWire.Kind.FREE, free.kind());
    assertEquals("r-1", free.requestId());
    assertEquals(7, free.workerId());
    assertEquals(0, steps.open(), "freed: forgotten");
    assertNull(steps.toWire(new LoadEvent.Freed(P, "r-1")), "a second free publishes nothing");
  }

  @Test
  void stepsOfABookingNeverPublishedPublishNothing() {
    ReplicaSteps steps = new ReplicaSteps(1);
    assertNull(steps.toWire(new LoadEvent.PrefillCompleted(P, "unknown")));
    assertNull(steps.toWire(new LoadEvent.Freed(P, "unknown")));
    assertEquals(0, steps.open());
  }
}
