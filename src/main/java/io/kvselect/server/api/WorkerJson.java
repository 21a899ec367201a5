package io.kvselect.server.api;

import io.kvselect.core.catalog.WorkerSpec;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decodes {@code POST /workers} (a full record; {@code worker_id} required) and
 * {@code PATCH /workers/{id}} (supplied fields replace the current ones; maps and sets replace
 * wholesale; identity fields are ignored) into a {@link WorkerSpec}.
 */
final class WorkerJson {

  private WorkerJson() {}

  /** Mutable builder over every registration field, seeded from a base spec for PATCH. */
  private static final class Fields {
    Long workerId;
    String model;
    String group;
    String endpoint;
    String kvEventsEndpoint;
    Map<Integer, String> kvEventsEndpoints;
    String replayEndpoint;
    Integer blockSize;
    int dpStart;
    int dpSize = 1;
    Long maxBatched;
    Long totalKvBlocks;
    String stableRoutingId;
    boolean eagle;
    Set<String> taints;
    Map<String, String> topology;
    String kvTransferDomain;
    String kvTransferEnforcement;
    Double kvTransferPreferredWeight;
    String hintType;
    Map<Integer, String> hintSources;
    String sourceMode;

    Fields() {}

    Fields(WorkerSpec s) {
      workerId = s.workerId();
      model = s.modelName();
      group = s.routingGroup();
      endpoint = s.endpoint();
      kvEventsEndpoint = s.kvEventsEndpoint();
      kvEventsEndpoints = s.kvEventsEndpoints();
      replayEndpoint = s.replayEndpoint();
      blockSize = s.blockSize();
      dpStart = s.dataParallelStartRank();
      dpSize = s.dataParallelSize();
      maxBatched = s.maxNumBatchedTokens();
      totalKvBlocks = s.totalKvBlocks();
      stableRoutingId = s.stableRoutingId();
      eagle = s.isEagle();
      taints = s.taints();
      topology = s.topologyDomains();
      kvTransferDomain = s.kvTransferDomain();
      kvTransferEnforcement = s.kvTransferEnforcement();
      kvTransferPreferredWeight = s.kvTransferPreferredWeight();
      hintType = s.routerHintWorkerType();
      hintSources = s.routerHintSourceControlEndpoints();
      sourceMode = s.kvEventSourceMode();
    }

    void field(String k, JsonReader r, boolean patch) throws IOException {
      switch (k) {
        case "worker_id" -> {
          Long v = r.u64(k);
          if (!patch) {
            workerId = v;
          }
        }
        case "model_name" -> {
          String v = r.string(k);
          if (!patch) {
            model = v;
          }
        }
        case "routing_group" -> {
          String v = r.string(k);
          if (!patch) {
            group = v;
          }
        }
        case "endpoint" -> endpoint = r.string(k);
        case "kv_events_endpoint" -> kvEventsEndpoint = r.string(k);
        case "kv_events_endpoints" -> kvEventsEndpoints = r.rankMap(k);
        case "replay_endpoint" -> replayEndpoint = r.string(k);
        case "block_size" -> blockSize = intOrNull(r.unsigned(k, 0xFFFF_FFFFL), k);
        case "data_parallel_start_rank" -> dpStart = intOr(r.unsigned(k, Integer.MAX_VALUE), 0);
        case "data_parallel_size" -> dpSize = intOr(r.unsigned(k, 65_536), 1);
        case "max_num_batched_tokens" -> maxBatched = r.unsigned(k, Long.MAX_VALUE);
        case "total_kv_blocks" -> totalKvBlocks = r.unsigned(k, Long.MAX_VALUE);
        case "stable_routing_id" -> stableRoutingId = r.string(k);
        case "is_eagle" -> eagle = Boolean.TRUE.equals(r.bool(k));
        case "taints" -> {
          List<String> l = r.stringArray(k);
          taints = l == null ? null : new HashSet<>(l);
        }
        case "topology_domains" -> topology = r.stringMap(k);
        case "kv_transfer_domain" -> kvTransferDomain = r.string(k);
        case "kv_transfer_enforcement" -> {
          kvTransferEnforcement = r.string(k);
          if (kvTransferEnforcement != null && !kvTransferEnforcement.equals("required")
              && !kvTransferEnforcement.equals("preferred")) {
            throw JsonReader.type(k, "one of required, preferred");
          }
        }
        case "kv_transfer_preferred_weight" -> kvTransferPreferredWeight = r.number(k);
        case "router_hint_worker_type" -> hintType = r.string(k);
        case "router_hint_source_control_endpoints" -> hintSources = r.rankMap(k);
        case "kv_event_source_mode" -> sourceMode = r.string(k);
        default -> r.skip();
      }
    }

    WorkerSpec build() {
      return new WorkerSpec(workerId, model, group, endpoint, kvEventsEndpoint, kvEventsEndpoints,
          replayEndpoint, blockSize, dpStart, dpSize, maxBatched, totalKvBlocks, stableRoutingId, eagle, taints,
          topology, kvTransferDomain, kvTransferEnforcement, kvTransferPreferredWeight, hintType, hintSources,
          sourceMode);
    }
  }

  private static Integer intOrNull(Long v, String field) {
    return v == null ? null : (int) Math.min(Integer.MAX_VALUE, v);
  }

  private static int intOr(Long v, int dflt) {
    return v == null ? dflt : v.intValue();
  }

  static WorkerSpec parse(byte[] body) {
    Fields f = new Fields();
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject((k, r) -> f.field(k, r, false));
    }
    if (f.workerId == null) {
      throw JsonReader.missing("worker_id");
    }
    return f.build();
  }

  static WorkerSpec patch(WorkerSpec base, byte[] body) {
    Fields f = new Fields(base);
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject((k, r) -> f.field(k, r, true));
    }
    return f.build();
  }
}
