package io.kvselect.core.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The catalog's value types: defaults, rank arithmetic, partition keys, lifecycle. */
class CatalogRecordsTest {

  private static WorkerSpec full(long id, int startRank, int dpSize) {
    return new WorkerSpec(id, "llama", "blue", "http://w", "tcp://e:1", Map.of(startRank, "tcp://e:2"),
        "tcp://r:3", 16, startRank, dpSize, 8192L, 1000L, "stable", true, Set.of("gpu"), Map.of("zone", "a"),
        "nvlink", "required", 0.5, "decode", Map.of(startRank, "tcp://c:4"), "engine");
  }

  @Test
  void specDefaultsThePartitionAndCopiesCollections() {
    Map<Integer, String> kv = new HashMap<>(Map.of(0, "tcp://e:1"));
    Set<String> taints = new HashSet<>(Set.of("gpu"));
    WorkerSpec s = new WorkerSpec(1, null, null, "http://w", null, kv, null, 16, 0, 1, null, null, null, false,
        taints, null, null, null, null, null, null, null);
    assertEquals("default", s.modelName());
    assertEquals("default", s.routingGroup());
    assertEquals(new PartitionKey("default", "default"), s.partition());
    assertEquals(Map.of(), s.topologyDomains());
    assertEquals(Map.of(), s.routerHintSourceControlEndpoints());
    kv.put(1, "tcp://e:2");
    taints.add("cpu");
    assertEquals(Map.of(0, "tcp://e:1"), s.kvEventsEndpoints(), "a later change of the caller's map is not seen");
    assertEquals(Set.of("gpu"), s.taints());
    assertThrows(UnsupportedOperationException.class, () -> s.taints().add("x"));

    WorkerSpec none = new WorkerSpec(2, "m", "g", null, null, null, null, null, 0, 1, null, null, null, false,
        null, null, null, null, null, null, null, null);
    assertEquals(Map.of(), none.kvEventsEndpoints());
    assertEquals(Set.of(), none.taints());
    assertEquals(new PartitionKey("m", "g"), none.partition());
  }

  @Test
  void minimalSpecIsOneRankInTheDefaultPartition() {
    WorkerSpec s = WorkerSpec.of(9, "http://w9", 32);
    assertEquals(9, s.workerId());
    assertEquals("http://w9", s.endpoint());
    assertEquals(32, s.blockSize());
    assertEquals(0, s.dataParallelStartRank());
    assertEquals(1, s.dataParallelSize());
    assertEquals(new PartitionKey(null, null), s.partition());
    assertFalse(s.isEagle());
    assertNull(s.kvEventsEndpoint());
  }

  @Test
  void kvEventsEndpointPerRankFallsBackToTheSingleOneOnlyForOneRank() {
    WorkerSpec one = new WorkerSpec(1, null, null, "http://w", "tcp://single:1", Map.of(), null, 16, 3, 1, null,
        null, null, false, null, null, null, null, null, null, null, null);
    assertEquals("tcp://single:1", one.kvEventsEndpointFor(3));
    WorkerSpec mapped = new WorkerSpec(1, null, null, "http://w", "tcp://single:1", Map.of(3, "tcp://map:3"), null,
        16, 3, 1, null, null, null, false, null, null, null, null, null, null, null, null);
    assertEquals("tcp://map:3", mapped.kvEventsEndpointFor(3), "the per-rank map wins");
    WorkerSpec two = new WorkerSpec(1, null, null, "http://w", "tcp://single:1", Map.of(3, "tcp://map:3"), null,
        16, 3, 2, null, null, null, false, null, null, null, null, null, null, null, null);
    assertEquals("tcp://map:3", two.kvEventsEndpointFor(3));
    assertNull(two.kvEventsEndpointFor(4));
  }

  @Test
  void withPartitionChangesOnlyThePartition() {
    WorkerSpec s = full(5, 2, 2);
    WorkerSpec moved = s.withPartition("other", "red");
    assertEquals(new PartitionKey("other", "red"), moved.partition());
    assertEquals(s, moved.withPartition("llama", "blue"), "every other field is carried over");
    assertEquals(new PartitionKey("default", "default"), s.withPartition(null, null).partition());
  }

  @Test
  void recordRanksAreGlobalAndContiguous() {
    WorkerRecord r = new WorkerRecord(full(5, 2, 3), Lifecycle.SCHEDULABLE, List.of());
    assertEquals(5, r.workerId());
    assertEquals(List.of(new WorkerRank(5, 2), new WorkerRank(5, 3), new WorkerRank(5, 4)), r.ranks());
    assertFalse(r.hasRank(1));
    assertTrue(r.hasRank(2));
    assertTrue(r.hasRank(4));
    assertFalse(r.hasRank(5));
    WorkerRecord none = new WorkerRecord(full(5, 2, 0), Lifecycle.INCOMPLETE, List.of("x"));
    assertEquals(List.of(), none.ranks());
    assertFalse(none.hasRank(2));
    WorkerRecord negative = new WorkerRecord(full(5, 2, -1), Lifecycle.INCOMPLETE, List.of("x"));
    assertEquals(List.of(), negative.ranks(), "a negative size (rejected as incomplete) has no ranks");
  }

  @Test
  void lifecycleDecidesSchedulabilityAndReasons() {
    List<String> reasons = new ArrayList<>(List.of("endpoint is required"));
    WorkerRecord incomplete = new WorkerRecord(full(1, 0, 1), Lifecycle.INCOMPLETE, reasons);
    reasons.clear();
    assertEquals(List.of("endpoint is required"), incomplete.notSchedulableReasons(), "reasons are copied");
    assertFalse(incomplete.schedulable());
    WorkerRecord draining = incomplete.withLifecycle(Lifecycle.DRAINING);
    assertEquals(Lifecycle.DRAINING, draining.lifecycle());
    assertFalse(draining.schedulable());
    assertEquals(List.of("endpoint is required"), draining.notSchedulableReasons(), "kept when not schedulable");
    WorkerRecord ok = incomplete.withLifecycle(Lifecycle.SCHEDULABLE);
    assertTrue(ok.schedulable());
    assertEquals(List.of(), ok.notSchedulableReasons(), "a schedulable record has no reasons");
    assertFalse(incomplete.withLifecycle(Lifecycle.UNSCHEDULABLE).schedulable());
  }

  @Test
  void lifecycleWireNames() {
    assertEquals("incomplete", Lifecycle.INCOMPLETE.wireName());
    assertEquals("schedulable", Lifecycle.SCHEDULABLE.wireName());
    assertEquals("draining", Lifecycle.DRAINING.wireName());
    assertEquals("unschedulable", Lifecycle.UNSCHEDULABLE.wireName());
  }

  @Test
  void partitionKeyDefaultsParsesAndOrders() {
    assertEquals(new PartitionKey("default", "default"), new PartitionKey(null, null));
    assertEquals("m:g", new PartitionKey("m", "g").toString());
    assertEquals(new PartitionKey("m", "g"), PartitionKey.parse("m:g"));
    assertEquals(new PartitionKey("m", "g:h"), PartitionKey.parse("m:g:h"), "split on the first colon");
    assertEquals(new PartitionKey("m", "default"), PartitionKey.parse("m"));
    assertEquals(new PartitionKey("", "g"), PartitionKey.parse(":g"));
    PartitionKey a = new PartitionKey("a", "z");
    PartitionKey b = new PartitionKey("b", "a");
    PartitionKey b2 = new PartitionKey("b", "b");
    assertTrue(a.compareTo(b) < 0, "model name first");
    assertTrue(b.compareTo(a) > 0);
    assertTrue(b.compareTo(b2) < 0, "then routing group");
    assertTrue(b2.compareTo(b) > 0);
    assertEquals(0, b.compareTo(new PartitionKey("b", "a")));
  }

  @Test
  void localCatalogSyncCompletesAtOnce() {
    var st = CatalogSync.LOCAL.publish(new CatalogSync.CatalogChange.Removed(3)).toCompletableFuture();
    assertTrue(st.isDone());
    assertNull(st.join());
  }
}
