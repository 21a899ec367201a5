package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The read-only views over several partitions: {@code /loads} filtered by model and routing group,
 * the index size and dump per partition in approximate mode, and a query in a partition without
 * workers answered 503.
 */
class InspectionViewsTest {

  private static final PartitionKey A = new PartitionKey("a", "g1");
  private static final PartitionKey B = new PartitionKey("b", "g2");

  private final ServiceFixture f = new ServiceFixture();
  private final SelectionService svc =
      f.service(ServiceFixture.approximate(), Duration.ofMinutes(5));

  private static WorkerSpec worker(long id, PartitionKey k) {
    return WorkerSpec.of(id, "http://w" + id, 4).withPartition(k.modelName(), k.routingGroup());
  }

  private static SelectRequest req(PartitionKey k, String id, int... tokens) {
    return SelectRequest.of(k, PromptInput.tokens(tokens)).withSelectionId(id);
  }

  private static List<PartitionKey> keys(List<PartitionLoads> loads) {
    return loads.stream().map(PartitionLoads::partition).toList();
  }

  @Test
  void loadsAreFilteredByModelAndByRoutingGroup() {
    join(svc.upsertWorker(worker(1, A)));
    join(svc.upsertWorker(worker(2, B)));
    join(svc.select(req(A, "r", 1, 2, 3, 4, 5, 6, 7, 8), true));
    Inspection views = svc.inspection();
    assertEquals(List.of(A, B), keys(views.loads(null, null)));
    assertEquals(List.of(A), keys(views.loads("a", null)));
    assertEquals(List.of(B), keys(views.loads(null, "g2")));
    assertEquals(List.of(A), keys(views.loads("a", "g1")));
    assertEquals(List.of(), keys(views.loads("a", "g2")), "both must match");
    assertEquals(List.of(), keys(views.loads("c", null)));
    PotentialLoad row = views.loads("a", null).get(0).loads().get(0);
    assertEquals(1, row.workerId());
    assertEquals(1, row.activeRequests());
    assertEquals(0, views.loads("b", null).get(0).loads().get(0).activeRequests());
  }

  @Test
  void theIndexSizeAndDumpCountEveryPartitionsBookedBlocks() {
    join(svc.upsertWorker(worker(1, A)));
    join(svc.upsertWorker(worker(2, B)));
    assertEquals(0, svc.inspection().indexSize());
    join(svc.select(req(A, "r1", 1, 2, 3, 4, 5, 6, 7, 8), true));
    join(svc.select(req(B, "r2", 1, 2, 3, 4), true));
    assertEquals(3, svc.inspection().indexSize(), "two blocks in a, one in b");
    List<PartitionDump> dump = svc.inspection().dump();
    assertEquals(List.of(A, B), dump.stream().map(PartitionDump::partition).toList());
    assertEquals(2, dump.get(0).blocks().size());
    assertEquals(1, dump.get(1).blocks().size());
    assertEquals(4, dump.get(0).blockSize());
  }

  @Test
  void aPromptQueryNeedsASchedulableWorkerInItsPartition() {
    join(svc.upsertWorker(worker(1, A)));
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> svc.inspection().overlapScores(req(B, null, 1, 2, 3, 4)));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertEquals(
        ErrorCode.NOT_READY,
        assertThrows(
                SelectionException.class,
                () -> svc.inspection().potentialLoads(req(B, null, 1, 2, 3, 4)))
            .code());
    join(svc.setUnreachable(1, "down"));
    assertEquals(
        ErrorCode.NOT_READY,
        assertThrows(
                SelectionException.class,
                () -> svc.inspection().overlapScores(req(A, null, 1, 2, 3, 4)))
            .code(),
        "a partition of no schedulable worker");
  }
}
