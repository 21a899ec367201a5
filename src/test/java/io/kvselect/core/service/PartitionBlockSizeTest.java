package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.eventWorker;
import static io.kvselect.core.service.ServiceFixture.events;
import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A partition keeps its block size while its members are only temporarily unschedulable: a dump
 * of another block size is refused, and a new member of another block size does not become
 * schedulable, until the partition has no member at all.
 */
class PartitionBlockSizeTest {

  private final ServiceFixture f = new ServiceFixture();
  private final SelectionService svc = f.service(events(), null);

  @Test
  void anUnreachableOnlyMemberKeepsThePartitionsBlockSize() {
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, null, null, null)));
    join(svc.setUnreachable(1, "engine down"));
    assertFalse(svc.worker(1).schedulable());
    assertEquals(-1, svc.restoreIndex(P, 8, List.of()), "the partition's block size is still 4");
    assertEquals(0, svc.restoreIndex(P, 4, List.of()));
    join(svc.upsertWorker(eventWorker(2, 8, 0, 1, null, null, null)));
    assertFalse(svc.worker(2).schedulable(), "a member of another block size: " + svc.worker(2));
  }

  @Test
  void aPartitionWithoutMembersTakesTheNextBlockSize() {
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, null, null, null)));
    join(svc.deleteWorker(1));
    join(svc.upsertWorker(eventWorker(2, 8, 0, 1, null, null, null)));
    assertTrue(svc.worker(2).schedulable());
    assertEquals(-1, svc.restoreIndex(P, 4, List.of()));
  }
}
