package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The two directions of the worker record agree: what {@link WorkerJsonWriter} writes uses the
 * field names {@link WorkerJson} reads, and reading it back gives the same spec.
 */
class WorkerJsonTest {

  private static final String FULL =
      """
      {"worker_id": 18446744073709551615, "model_name": "m", "routing_group": "g",
       "endpoint": "http://w:8000", "kv_events_endpoint": "tcp://w:5557",
       "kv_events_endpoints": {"3": "tcp://w:5558", "2": "tcp://w:5557"},
       "replay_endpoint": "tcp://w:5560", "block_size": 16,
       "data_parallel_start_rank": 2, "data_parallel_size": 2,
       "max_num_batched_tokens": 8192, "total_kv_blocks": 1000, "stable_routing_id": "s1",
       "is_eagle": true, "taints": ["b", "a"], "topology_domains": {"zone": "z1", "rack": "r1"},
       "kv_transfer_domain": "d", "kv_transfer_enforcement": "preferred",
       "kv_transfer_preferred_weight": 0.5, "router_hint_worker_type": "prefill",
       "router_hint_source_control_endpoints": {"2": "http://w:9000"},
       "kv_event_source_mode": "zmq", "health_url": "http://w:8000/health",
       "worker_type": "prefill", "kv_capacity_tokens": 65536,
       "admission_endpoint": "http://w:8001/admit"}
      """;

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> keys(byte[] json) throws IOException {
    JsonNode n = new ObjectMapper().readTree(json);
    List<String> out = new ArrayList<>();
    n.fieldNames().forEachRemaining(out::add);
    return out;
  }

  @Test
  void everyRegistrationFieldIsWrittenUnderTheNameThatIsRead() throws IOException {
    WorkerSpec spec = WorkerJson.parse(bytes(FULL));
    byte[] out = WorkerJsonWriter.worker(new WorkerRecord(spec, Lifecycle.SCHEDULABLE, List.of()));
    Set<String> expected = new LinkedHashSet<>(WorkerJson.FIELDS);
    expected.add("lifecycle");
    assertEquals(expected, new LinkedHashSet<>(keys(out)));
  }

  @Test
  void whatIsWrittenReadsBackAsTheSameSpec() {
    WorkerSpec spec = WorkerJson.parse(bytes(FULL));
    byte[] out =
        WorkerJsonWriter.worker(
            new WorkerRecord(spec, Lifecycle.UNSCHEDULABLE, List.of("draining")),
            List.of("unknown field `x` ignored"));
    WorkerJson.Parsed back = WorkerJson.parseWithWarnings(out);
    assertEquals(spec, back.spec());
    assertEquals(
        List.of(
            "unknown field `lifecycle` ignored",
            "unknown field `not_schedulable_reasons` ignored",
            "unknown field `warnings` ignored"),
        back.warnings());
  }

  @Test
  void aMinimalSpecWritesOnlyItsFieldsAndDefaults() throws IOException {
    WorkerSpec spec = WorkerJson.parse(bytes("{\"worker_id\": 7}"));
    byte[] out = WorkerJsonWriter.worker(new WorkerRecord(spec, Lifecycle.INCOMPLETE, List.of()));
    assertEquals(
        List.of(
            "worker_id",
            "model_name",
            "routing_group",
            "data_parallel_start_rank",
            "data_parallel_size",
            "is_eagle",
            "lifecycle"),
        keys(out));
    assertEquals(spec, WorkerJson.parse(out));
  }
}
