package io.kvselect.server.api;

import io.kvselect.core.catalog.DisaggSpec;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.NearestName;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Worker records from JSON. Decodes {@code POST /workers} (a full record; {@code worker_id}
 * required) and {@code PATCH /workers/{id}} (supplied fields replace the current ones; maps and
 * sets replace wholesale; identity fields are ignored) into a {@link WorkerSpec}, each field's
 * check and default defined here once. The other direction, a record as the API answers it, is
 * {@link WorkerJsonWriter}, under the same field names ({@link #FIELDS}). Stateless.
 */
final class WorkerJson {

  private WorkerJson() {}

  /** Every registration field the decoder reads; any other key is reported as unknown. */
  static final List<String> FIELDS =
      List.of(
          "worker_id",
          "model_name",
          "routing_group",
          "endpoint",
          "kv_events_endpoint",
          "kv_events_endpoints",
          "replay_endpoint",
          "block_size",
          "data_parallel_start_rank",
          "data_parallel_size",
          "max_num_batched_tokens",
          "total_kv_blocks",
          "stable_routing_id",
          "is_eagle",
          "taints",
          "topology_domains",
          "kv_transfer_domain",
          "kv_transfer_enforcement",
          "kv_transfer_preferred_weight",
          "router_hint_worker_type",
          "router_hint_source_control_endpoints",
          "kv_event_source_mode",
          "health_url",
          "worker_type",
          "kv_capacity_tokens",
          "admission_endpoint");

  /** A decoded body: the spec and one warning per unknown field (in body order). */
  record Parsed(WorkerSpec spec, List<String> warnings) {}

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
    String healthUrl;
    String workerType;
    Long kvCapacityTokens;
    String admissionEndpoint;
    final List<String> unknown = new ArrayList<>();

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
      healthUrl = s.healthUrl();
      workerType = s.disagg().workerType();
      kvCapacityTokens = s.disagg().kvCapacityTokens();
      admissionEndpoint = s.disagg().admissionEndpoint();
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
        case "block_size" -> blockSize = intOrNull(r.unsigned(k, Integer.MAX_VALUE), k);
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
          if (kvTransferEnforcement != null
              && !kvTransferEnforcement.equals("required")
              && !kvTransferEnforcement.equals("preferred")) {
            throw JsonReader.type(k, "one of required, preferred");
          }
        }
        case "kv_transfer_preferred_weight" -> kvTransferPreferredWeight = r.number(k);
        case "router_hint_worker_type" -> hintType = r.string(k);
        case "router_hint_source_control_endpoints" -> hintSources = r.rankMap(k);
        case "kv_event_source_mode" -> sourceMode = r.string(k);
        case "health_url" -> healthUrl = r.string(k);
        case "worker_type" -> workerType = r.string(k);
        case "kv_capacity_tokens" -> kvCapacityTokens = r.unsigned(k, Long.MAX_VALUE);
        case "admission_endpoint" -> admissionEndpoint = r.string(k);
        default -> {
          unknown.add(k);
          r.skip();
        }
      }
    }

    WorkerSpec build() {
      return WorkerSpec.builder(workerId)
          .modelName(model)
          .routingGroup(group)
          .endpoint(endpoint)
          .kvEventsEndpoint(kvEventsEndpoint)
          .kvEventsEndpoints(kvEventsEndpoints)
          .replayEndpoint(replayEndpoint)
          .blockSize(blockSize)
          .dataParallelStartRank(dpStart)
          .dataParallelSize(dpSize)
          .maxNumBatchedTokens(maxBatched)
          .totalKvBlocks(totalKvBlocks)
          .stableRoutingId(stableRoutingId)
          .isEagle(eagle)
          .taints(taints)
          .topologyDomains(topology)
          .kvTransferDomain(kvTransferDomain)
          .kvTransferEnforcement(kvTransferEnforcement)
          .kvTransferPreferredWeight(kvTransferPreferredWeight)
          .routerHintWorkerType(hintType)
          .routerHintSourceControlEndpoints(hintSources)
          .kvEventSourceMode(sourceMode)
          .healthUrl(healthUrl)
          .disagg(new DisaggSpec(workerType, kvCapacityTokens, admissionEndpoint))
          .build();
    }
  }

  private static Integer intOrNull(Long v, String field) {
    return v == null ? null : (int) Math.min(Integer.MAX_VALUE, v);
  }

  private static int intOr(Long v, int dflt) {
    return v == null ? dflt : v.intValue();
  }

  static WorkerSpec parse(byte[] body) {
    return parseWithWarnings(body).spec();
  }

  /** As {@link #parse}, with a warning naming each field the body has that is not a registration field. */
  static Parsed parseWithWarnings(byte[] body) {
    Fields f = new Fields();
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject((k, r) -> f.field(k, r, false));
    }
    if (f.workerId == null) {
      throw JsonReader.missing("worker_id");
    }
    return new Parsed(f.build(), warnings(f.unknown));
  }

  static WorkerSpec patch(WorkerSpec base, byte[] body) {
    return patchWithWarnings(base, body).spec();
  }

  /** As {@link #patch}, with the warnings of {@link #parseWithWarnings}. */
  static Parsed patchWithWarnings(WorkerSpec base, byte[] body) {
    Fields f = new Fields(base);
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject((k, r) -> f.field(k, r, true));
    }
    return new Parsed(f.build(), warnings(f.unknown));
  }

  private static List<String> warnings(List<String> unknown) {
    List<String> out = new ArrayList<>(unknown.size());
    for (String k : unknown) {
      String near = NearestName.closest(k, FIELDS);
      out.add(
          "unknown field `"
              + k
              + "` ignored"
              + (near == null ? "" : " (did you mean `" + near + "`?)"));
    }
    return List.copyOf(out);
  }
}
