package io.kvselect.core.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SelectRequestCopiesTest {

  private static final PartitionKey P = new PartitionKey("m", "g");

  private static SelectRequest full() {
    return new SelectRequest(
        P,
        "id-1",
        PromptInput.tokens(1, 2, 3),
        null,
        7L,
        "s-old",
        null,
        new WorkerRank(9, -1),
        null,
        new long[] {4, 9},
        Set.of("gpu"),
        Map.of("fast", 1.5),
        true,
        "batch",
        2.0,
        3L);
  }

  @Test
  void withSessionIdChangesOnlyTheSession() {
    SelectRequest q = full();
    SelectRequest s = q.withSessionId("s-new");
    assertEquals("s-new", s.sessionId());
    assertEquals(q.withSessionId("s-old"), q.withSessionId("s-old").withSessionId("s-old"));
    assertEquals(q.selectionId(), s.selectionId());
    assertEquals(q.expectedOutputTokens(), s.expectedOutputTokens());
    assertEquals(q.affinityTarget(), s.affinityTarget());
    assertArrayEquals(q.allowedWorkerIds(), s.allowedWorkerIds());
    assertEquals(q.requiredTaints(), s.requiredTaints());
    assertEquals(q.preferredTaints(), s.preferredTaints());
    assertEquals(q.advisory(), s.advisory());
    assertEquals(q.policyClass(), s.policyClass());
    assertEquals(q.priorityJump(), s.priorityJump());
    assertEquals(q.strictPriority(), s.strictPriority());
  }

  @Test
  void withPinnedWorkerPinsAndDropsTheAffinityTargetKeepingTheRest() {
    SelectRequest q = full();
    SelectRequest p = q.withPinnedWorker(new WorkerRank(4, 1));
    assertEquals(new WorkerRank(4, 1), p.pinnedWorker());
    assertNull(p.affinityTarget());
    assertEquals("s-old", p.sessionId());
    assertEquals("id-1", p.selectionId());
    assertArrayEquals(q.allowedWorkerIds(), p.allowedWorkerIds());
    assertEquals("batch", p.policyClass());
    assertEquals(3L, p.strictPriority());
  }
}
