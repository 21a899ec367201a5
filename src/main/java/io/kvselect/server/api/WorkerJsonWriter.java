package io.kvselect.server.api;

import com.fasterxml.jackson.core.JsonGenerator;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.events.RankStats;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Worker records to JSON: one catalog record as {@code GET /workers} and the {@code /workers}
 * answers write it (registration fields under the names {@link WorkerJson} reads, unset optional
 * fields left out, sets and maps in sorted order, then {@code lifecycle}), optionally with each
 * rank's KV-event listener state and a body's warnings. The decoding side is {@link WorkerJson}.
 * Stateless.
 */
final class WorkerJsonWriter {

  private WorkerJsonWriter() {}

  static byte[] worker(WorkerRecord w) {
    return ResponseJson.write(g -> write(g, w, null));
  }

  /** A POST or PATCH answer: the record, then {@code warnings} when the body had unknown fields. */
  static byte[] worker(WorkerRecord w, List<String> warnings) {
    return ResponseJson.write(g -> write(g, w, null, warnings));
  }

  /** The catalog; {@code listeners} (nullable) adds each rank's KV-event listener state. */
  static byte[] workers(
      List<WorkerRecord> ws, Map<WorkerRank, RankStats> listeners, KvEventsCoordinator events) {
    return ResponseJson.write(
        g -> {
          g.writeStartArray();
          for (WorkerRecord w : ws) {
            write(g, w, listeners == null ? null : g2 -> kvEvents(g2, w, listeners, events));
          }
          g.writeEndArray();
        });
  }

  private static void kvEvents(
      JsonGenerator g,
      WorkerRecord w,
      Map<WorkerRank, RankStats> listeners,
      KvEventsCoordinator events)
      throws IOException {
    g.writeObjectFieldStart("kv_events");
    for (WorkerRank r : w.ranks()) {
      RankStats st = listeners.get(r);
      if (st == null) {
        continue;
      }
      g.writeObjectFieldStart(Integer.toString(r.dpRank()));
      g.writeStringField("state", st.stateName());
      if (st.lastSeq() >= 0) {
        g.writeNumberField("last_seq", st.lastSeq());
      } else {
        g.writeNullField("last_seq");
      }
      g.writeNumberField("batches", st.batches());
      g.writeNumberField("gaps", st.gaps());
      g.writeNumberField("replays", st.replays());
      g.writeNumberField("resets", st.resets());
      g.writeNumberField("dropped_frames", st.droppedFrames());
      g.writeNumberField("malformed_payloads", events.malformedPayloads(r));
      if (st.lastEventAt() > 0) {
        g.writeStringField(
            "last_event_at", java.time.Instant.ofEpochMilli(st.lastEventAt()).toString());
      } else {
        g.writeNullField("last_event_at");
      }
      g.writeNumberField("retries", st.retries());
      if (st.lastError() != null) {
        g.writeStringField("last_error", st.lastError());
      } else {
        g.writeNullField("last_error");
      }
      g.writeEndObject();
    }
    g.writeEndObject();
  }

  /** Writes one catalog record; {@code extra} (nullable) adds fields after {@code lifecycle}. */
  static void write(JsonGenerator g, WorkerRecord w, ResponseJson.Body extra) throws IOException {
    write(g, w, extra, List.of());
  }

  private static void write(
      JsonGenerator g, WorkerRecord w, ResponseJson.Body extra, List<String> warnings)
      throws IOException {
    WorkerSpec s = w.spec();
    g.writeStartObject();
    ResponseJson.u64(g, "worker_id", s.workerId());
    g.writeStringField("model_name", s.modelName());
    g.writeStringField("routing_group", s.routingGroup());
    optString(g, "endpoint", s.endpoint());
    optString(g, "kv_events_endpoint", s.kvEventsEndpoint());
    if (!s.kvEventsEndpoints().isEmpty()) {
      rankMap(g, "kv_events_endpoints", s.kvEventsEndpoints());
    }
    optString(g, "replay_endpoint", s.replayEndpoint());
    if (s.blockSize() != null) {
      g.writeNumberField("block_size", s.blockSize());
    }
    g.writeNumberField("data_parallel_start_rank", s.dataParallelStartRank());
    g.writeNumberField("data_parallel_size", s.dataParallelSize());
    if (s.maxNumBatchedTokens() != null) {
      g.writeNumberField("max_num_batched_tokens", s.maxNumBatchedTokens());
    }
    if (s.totalKvBlocks() != null) {
      g.writeNumberField("total_kv_blocks", s.totalKvBlocks());
    }
    optString(g, "stable_routing_id", s.stableRoutingId());
    g.writeBooleanField("is_eagle", s.isEagle());
    if (!s.taints().isEmpty()) {
      g.writeArrayFieldStart("taints");
      for (String t : new java.util.TreeSet<>(s.taints())) {
        g.writeString(t);
      }
      g.writeEndArray();
    }
    if (!s.topologyDomains().isEmpty()) {
      g.writeObjectFieldStart("topology_domains");
      for (var e : new TreeMap<>(s.topologyDomains()).entrySet()) {
        g.writeStringField(e.getKey(), e.getValue());
      }
      g.writeEndObject();
    }
    optString(g, "kv_transfer_domain", s.kvTransferDomain());
    optString(g, "kv_transfer_enforcement", s.kvTransferEnforcement());
    if (s.kvTransferPreferredWeight() != null) {
      g.writeNumberField("kv_transfer_preferred_weight", s.kvTransferPreferredWeight());
    }
    optString(g, "router_hint_worker_type", s.routerHintWorkerType());
    if (!s.routerHintSourceControlEndpoints().isEmpty()) {
      rankMap(g, "router_hint_source_control_endpoints", s.routerHintSourceControlEndpoints());
    }
    optString(g, "kv_event_source_mode", s.kvEventSourceMode());
    optString(g, "health_url", s.healthUrl());
    optString(g, "worker_type", s.disagg().workerType());
    if (s.disagg().kvCapacityTokens() != null) {
      g.writeNumberField("kv_capacity_tokens", s.disagg().kvCapacityTokens());
    }
    optString(g, "admission_endpoint", s.disagg().admissionEndpoint());
    g.writeStringField("lifecycle", w.lifecycle().wireName());
    if (extra != null) {
      extra.write(g);
    }
    if (!w.notSchedulableReasons().isEmpty()) {
      g.writeArrayFieldStart("not_schedulable_reasons");
      for (String r : w.notSchedulableReasons()) {
        g.writeString(r);
      }
      g.writeEndArray();
    }
    if (!warnings.isEmpty()) {
      g.writeArrayFieldStart("warnings");
      for (String t : warnings) {
        g.writeString(t);
      }
      g.writeEndArray();
    }
    g.writeEndObject();
  }

  private static void optString(JsonGenerator g, String name, String v) throws IOException {
    if (v != null) {
      g.writeStringField(name, v);
    }
  }

  private static void rankMap(JsonGenerator g, String name, Map<Integer, String> m)
      throws IOException {
    g.writeObjectFieldStart(name);
    for (var e : new TreeMap<>(m).entrySet()) {
      g.writeStringField(Integer.toString(e.getKey()), e.getValue());
    }
    g.writeEndObject();
  }
}
