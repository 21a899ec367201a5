package io.kvselect.core.load;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Origins of active requests: who booked each one, listing and removing by origin. */
class ActiveLoadOriginTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private final ActiveLoad load = new ActiveLoad(new MutableClock(), Duration.ofSeconds(300), 1);

  @Test
  void originsAreKeptAndListedPerOrigin() {
    load.addRequest("local", A, new long[] {1, 2}, 8, 4, null, true, 8);
    load.addRequest("peer", A, new long[] {1, 3}, 8, 4, 5, true, 6, "node-b");
    assertNull(load.originOf("local"));
    assertTrue(load.isActive("local"));
    assertEquals("node-b", load.originOf("peer"));
    assertNull(load.originOf("absent"));
    assertFalse(load.isActive("absent"));
    assertEquals(new HashSet<>(java.util.Arrays.asList(null, "node-b")), load.origins());

    List<ActiveLoad.RequestView> peer = load.requests("node-b");
    assertEquals(1, peer.size());
    ActiveLoad.RequestView v = peer.get(0);
    assertEquals("peer", v.requestId());
    assertArrayEquals(new long[] {1, 3}, v.sequenceHashes());
    assertEquals(8, v.islTokens());
    assertEquals(5, v.expectedOutputTokens());
    assertEquals(6, v.prefillTokens());
    load.markPrefillComplete("peer");
    assertEquals(0, load.requests("node-b").get(0).prefillTokens());
    assertEquals(
        List.of("local"),
        load.requests(null).stream().map(ActiveLoad.RequestView::requestId).toList());
  }

  @Test
  void removingAnOriginReleasesOnlyItsRequests() {
    load.addRequest("local", A, new long[] {1, 2}, 8, 4, null, true, 8);
    load.addRequest("p1", A, new long[] {1, 3}, 8, 4, null, true, 6, "node-b");
    load.addRequest("p2", A, new long[] {4}, 4, 4, null, true, 2, "node-b");
    load.addRequest("c1", A, new long[] {5}, 4, 4, null, true, 1, "node-c");
    assertEquals(new RankLoad(5, 17, 4), load.load(A));

    assertEquals(List.of("p1", "p2"), load.removeOrigin("node-b"));
    assertEquals(new RankLoad(3, 9, 2), load.load(A), "block 1 stays with the local request");
    assertEquals(List.of(), load.removeOrigin("node-b"));
    assertEquals(Set.of("c1"), Set.copyOf(load.removeOrigin("node-c")));
    assertEquals(new RankLoad(2, 8, 1), load.load(A));
  }
}
