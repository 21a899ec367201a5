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
    return WorkerSpec.builder(id)
        .modelName("llama")
        .routingGroup("blue")
        .endpoint("http://w")
        .kvEventsEndpoint("tcp://e:1")
        .kvEventsEndpoints(Map.of(startRank, "tcp://e:2"))
        .replayEndpoint("tcp://r:3")
        .blockSize(16)
        .dataParallelStartRank(startRank)
        .dataParallelSize(dpSize)
        .maxNumBatchedTokens(8192L)
        .totalKvBlocks(1000L)
        .stableRoutingId("stable")
        .isEagle(true)
        .taints(Set.of("gpu"))
        .topologyDomains(Map.of("zone", "a"))
        .kvTransferDomain("nvlink")
        .kvTransferEnforcement("required")
        .kvTransferPreferredWeight(0.5)
        .routerHintWorkerType("decode")
        .routerHintSourceControlEndpoints(Map.of(startRank, "tcp://c:4"))
        .kvEventSourceMode("engine")
        .build();
  }

  @Test
  void specDefaultsThePartitionAndCopiesCollections() {
    Map<Integer, String> kv = new HashMap<>(Map.of(0, "tcp://e:1"));
    Set<String> taints = new HashSet<>(Set.of("gpu"));
    WorkerSpec s =
        WorkerSpec.builder(1)
            .endpoint("http://w")
            .kvEventsEndpoints(kv)
            .blockSize(16)
            .taints(taints)
            .build();
    assertEquals("default", s.modelName());
    assertEquals("default", s.routingGroup());
    assertEquals(new PartitionKey("default", "default"), s.partition());
    assertEquals(Map.of(), s.topologyDomains());
    assertEquals(Map.of(), s.routerHintSourceControlEndpoints());
    kv.put(1, "tcp://e:2");
    taints.add("cpu");
    assertEquals(
        Map.of(0, "tcp://e:1"),
        s.kvEventsEndpoints(),
        "a later change of the caller's map is not seen");
    assertEquals(Set.of("gpu"), s.taints());
    assertThrows(UnsupportedOperationException.class, () -> s.taints().add("x"));

    WorkerSpec none = WorkerSpec.builder(2).modelName("m").routingGroup("g").build();
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
    WorkerSpec one =
        WorkerSpec.builder(1)
            .endpoint("http://w")
            .kvEventsEndpoint("tcp://single:1")
            .kvEventsEndpoints(Map.of())
            .blockSize(16)
            .dataParallelStartRank(3)
            .build();
    assertEquals("tcp://single:1", one.kvEventsEndpointFor(3));
    WorkerSpec mapped =
        WorkerSpec.builder(1)
            .endpoint("http://w")
            .kvEventsEndpoint("tcp://single:1")
            .kvEventsEndpoints(Map.of(3, "tcp://map:3"))
            .blockSize(16)
            .dataParallelStartRank(3)
            .build();
    assertEquals("tcp://map:3", mapped.kvEventsEndpointFor(3), "the per-rank map wins");
    WorkerSpec two =
        WorkerSpec.builder(1)
            .endpoint("http://w")
            .kvEventsEndpoint("tcp://single:1")
            .kvEventsEndpoints(Map.of(3, "tcp://map:3"))
            .blockSize(16)
            .dataParallelStartRank(3)
            .dataParallelSize(2)
            .build();
    assertEquals("tcp://map:3", two.kvEventsEndpointFor(3));
    assertNull(two.kvEventsEndpointFor(4));
  }

  @Test
  void theBuilderStartsFromABareRegistrationAndCopiesEveryField() {
    WorkerSpec bare = WorkerSpec.builder(4).build();
    assertEquals(new PartitionKey("default", "default"), bare.partition());
    assertEquals(0, bare.dataParallelStartRank());
    assertEquals(
        1, bare.dataParallelSize(), "one DP rank, as a POST /workers body without the field");
    assertFalse(bare.isEagle());
    assertEquals(DisaggSpec.NONE, bare.disagg());
    assertNull(bare.endpoint());
    assertEquals(
        WorkerSpec.of(4, "http://w", 16),
        WorkerSpec.builder(4).endpoint("http://w").blockSize(16).build());
    WorkerSpec s =
        WorkerSpec.builder(6)
            .endpoint("http://w")
            .healthUrl("http://w/health")
            .disagg(new DisaggSpec("decode", 100L, null))
            .build();
    assertEquals(s, s.toBuilder().build());
    assertEquals(full(5, 2, 2), full(5, 2, 2).toBuilder().build());
    assertEquals(
        DisaggSpec.NONE, s.toBuilder().disagg(null).build().disagg(), "null means no role fields");
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
    assertEquals(
        List.of(new WorkerRank(5, 2), new WorkerRank(5, 3), new WorkerRank(5, 4)), r.ranks());
    assertFalse(r.hasRank(1));
    assertTrue(r.hasRank(2));
    assertTrue(r.hasRank(4));
    assertFalse(r.hasRank(5));
    WorkerRecord none = new WorkerRecord(full(5, 2, 0), Lifecycle.INCOMPLETE, List.of("x"));
    assertEquals(List.of(), none.ranks());
    assertFalse(none.hasRank(2));
    WorkerRecord negative = new WorkerRecord(full(5, 2, -1), Lifecycle.INCOMPLETE, List.of("x"));
    assertEquals(
        List.of(), negative.ranks(), "a negative size (rejected as incomplete) has no ranks");
  }

  @Test
  void lifecycleDecidesSchedulabilityAndReasons() {
    List<String> reasons = new ArrayList<>(List.of("endpoint is required"));
    WorkerRecord incomplete = new WorkerRecord(full(1, 0, 1), Lifecycle.INCOMPLETE, reasons);
    reasons.clear();
    assertEquals(
        List.of("endpoint is required"), incomplete.notSchedulableReasons(), "reasons are copied");
    assertFalse(incomplete.schedulable());
    WorkerRecord draining = incomplete.withLifecycle(Lifecycle.DRAINING);
    assertEquals(Lifecycle.DRAINING, draining.lifecycle());
    assertFalse(draining.schedulable());
    assertEquals(
        List.of("endpoint is required"),
        draining.notSchedulableReasons(),
        "kept when not schedulable");
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
    assertEquals(
        new PartitionKey("m", "g:h"), PartitionKey.parse("m:g:h"), "split on the first colon");
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
    var st =
        CatalogSync.LOCAL.publish(new CatalogSync.CatalogChange.Removed(3)).toCompletableFuture();
    assertTrue(st.isDone());
    assertNull(st.join());
  }
}
