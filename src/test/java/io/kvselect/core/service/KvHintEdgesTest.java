package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.eventWorker;
import static io.kvselect.core.service.ServiceFixture.events;
import static io.kvselect.core.service.ServiceFixture.join;
import static io.kvselect.core.service.ServiceFixture.pinned;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Where a {@code kv.fetch} hint may point: only at another worker (never at another rank of the
 * chosen one), only at a strictly longer device prefix, and at the deepest such holder.
 */
class KvHintEdgesTest {

  private final ServiceFixture f = new ServiceFixture();
  private final SelectionService svc = f.service(events(), null);

  private void cache(WorkerRank r, long externalBase, int... tokens) {
    long[] l =
        BlockHasher.localBlockHashes(
            tokens, tokens.length, 4, BlockHasher.saltSeed(null, null), false, null);
    long[] ext = new long[l.length];
    for (int i = 0; i < ext.length; i++) {
      ext[i] = externalBase + i;
    }
    assertTrue(svc.eventIndex(P).store(r, StorageTier.DEVICE, false, 0, ext, l));
  }

  @Test
  void anotherRankOfTheChosenWorkerIsNoSource() {
    join(
        svc.upsertWorker(
            eventWorker(1, 4, 0, 2, "decode", Map.of(0, "tcp://c1:0", 1, "tcp://c1:1"), null)));
    cache(new WorkerRank(1, 0), 100, 1, 2, 3, 4);
    cache(new WorkerRank(1, 1), 200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    assertNull(
        join(svc.select(pinned("a", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), true)).kvHint());
  }

  @Test
  void anEquallyDeepHolderIsNoSourceAndADeeperOneIs() {
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, "decode", Map.of(0, "tcp://c1:0"), null)));
    join(svc.upsertWorker(eventWorker(2, 4, 0, 1, "decode", Map.of(0, "tcp://c2:0"), null)));
    join(svc.upsertWorker(eventWorker(3, 4, 0, 1, "decode", Map.of(0, "tcp://c3:0"), null)));
    cache(new WorkerRank(1, 0), 100, 1, 2, 3, 4, 5, 6, 7, 8);
    cache(new WorkerRank(2, 0), 200, 1, 2, 3, 4, 5, 6, 7, 8);
    assertNull(
        join(svc.select(pinned("a", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), true)).kvHint(),
        "worker 2 holds exactly what worker 1 holds");
    cache(new WorkerRank(3, 0), 300, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    KvHint h =
        join(svc.select(pinned("b", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), true)).kvHint();
    assertNotNull(h);
    assertEquals("tcp://c3:0", h.sourceControlEndpoint());
    assertEquals(3, h.blockHashes().length);
    assertEquals(300, h.blockHashes()[0], "named by the source's own external hashes");
  }

  @Test
  void theDeepestHolderWinsWhateverItsOrder() {
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, "decode", Map.of(0, "tcp://c1:0"), null)));
    join(svc.upsertWorker(eventWorker(2, 4, 0, 1, "decode", Map.of(0, "tcp://c2:0"), null)));
    join(svc.upsertWorker(eventWorker(3, 4, 0, 1, "decode", Map.of(0, "tcp://c3:0"), null)));
    cache(new WorkerRank(2, 0), 200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    cache(new WorkerRank(3, 0), 300, 1, 2, 3, 4);
    KvHint h =
        join(svc.select(pinned("a", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), true)).kvHint();
    assertEquals("tcp://c2:0", h.sourceControlEndpoint());
    assertEquals(3, h.blockHashes().length);
  }
}
