package io.kvselect.server.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.KvHint;
import io.kvselect.core.service.OverlapReport;
import io.kvselect.core.service.OverlapRow;
import io.kvselect.core.service.OverlapSummary;
import io.kvselect.core.service.PartitionDump;
import io.kvselect.core.service.PartitionLoads;
import io.kvselect.core.service.PotentialLoad;
import io.kvselect.core.service.ReadyStatus;
import io.kvselect.core.service.Reservation;
import io.kvselect.core.service.Selection;
import io.kvselect.core.service.WorkerLoad;
import io.kvselect.server.sync.IndexRecovery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes response bodies with Jackson's streaming generator (no intermediate trees). Field names
 * and shapes follow Dynamo's selection service; u64 ids and engine (external) hashes are written
 * unsigned, the router's sequence hashes as signed i64.
 */
final class ResponseJson {

  private static final JsonFactory FACTORY = new JsonFactory();

  private ResponseJson() {}

  interface Body {
    void write(JsonGenerator g) throws IOException;
  }

  static byte[] write(Body b) {
    try (ByteArrayBuilder out = new ByteArrayBuilder(512);
        JsonGenerator g = FACTORY.createGenerator(out)) {
      b.write(g);
      g.flush();
      return out.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static byte[] status(String status) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeStringField("status", status);
          g.writeEndObject();
        });
  }

  static byte[] error(String message) {
    return error(message, null);
  }

  /** Dynamo's error envelope, with a {@code details} object when the failure carries one. */
  static byte[] error(String message, java.util.Map<String, Object> details) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeStringField("error", message);
          if (details != null) {
            g.writeObjectFieldStart("details");
            for (var e : details.entrySet()) {
              Object v = e.getValue();
              if (v == null) {
                g.writeNullField(e.getKey());
              } else if (v instanceof Number n) {
                g.writeNumberField(e.getKey(), n.longValue());
              } else {
                g.writeStringField(e.getKey(), v.toString());
              }
            }
            g.writeEndObject();
          }
          g.writeEndObject();
        });
  }

  static void u64(JsonGenerator g, String name, long v) throws IOException {
    g.writeFieldName(name);
    if (v >= 0) {
      g.writeNumber(v);
    } else {
      g.writeNumber(new java.math.BigInteger(Long.toUnsignedString(v)));
    }
  }

  /** An array of u64 values as JSON numbers, those above {@code Long.MAX_VALUE} unsigned. */
  private static void u64Array(JsonGenerator g, String name, long[] values) throws IOException {
    g.writeArrayFieldStart(name);
    for (long v : values) {
      if (v >= 0) {
        g.writeNumber(v);
      } else {
        g.writeNumber(new java.math.BigInteger(Long.toUnsignedString(v)));
      }
    }
    g.writeEndArray();
  }

  private static void hashes(JsonGenerator g, String name, long[] values) throws IOException {
    g.writeFieldName(name);
    g.writeArray(values, 0, values.length);
  }

  static byte[] selection(Selection s) {
    return write(
        g -> {
          g.writeStartObject();
          if (s.selectionId() != null) {
            g.writeStringField("selection_id", s.selectionId());
          }
          if (s.booked()) {
            hashes(g, "sequence_hashes", s.sequenceHashes());
            g.writeNumberField("isl_tokens", s.islTokens());
            g.writeBooleanField("track_prefill_tokens", s.trackPrefillTokens());
          }
          g.writeStringField("model_name", s.partition().modelName());
          g.writeStringField("routing_group", s.partition().routingGroup());
          u64(g, "worker_id", s.workerId());
          g.writeNumberField("dp_rank", s.dpRank());
          g.writeStringField("endpoint", s.endpoint());
          g.writeNumberField("block_size", s.blockSize());
          overlap(g, s.overlap());
          g.writeNumberField("effective_prefill_tokens", s.effectivePrefillTokens());
          g.writeNumberField("potential_decode_blocks", s.potentialDecodeBlocks());
          if (s.decodeBusy() != null) {
            g.writeBooleanField("decode_busy", s.decodeBusy());
          }
          if (s.workerLoad() != null) {
            workerLoad(g, s.workerLoad());
          }
          if (s.kvHint() != null) {
            kvHint(g, s.kvHint());
          }
          if (s.kvc() != null) {
            kvc(g, s.kvc());
          }
          g.writeEndObject();
        });
  }

  /** {@code kvc: {mode, prefill_worker, append_tokens, attempts}} (see docs/kvc.md). */
  private static void kvc(JsonGenerator g, io.kvselect.core.kvc.KvcAnswer k) throws IOException {
    g.writeObjectFieldStart("kvc");
    g.writeStringField("mode", k.mode());
    if (k.prefill() != null) {
      g.writeObjectFieldStart("prefill_worker");
      u64(g, "worker_id", k.prefill().workerId());
      g.writeNumberField("dp_rank", k.prefill().dpRank());
      if (k.prefill().endpoint() != null) {
        g.writeStringField("endpoint", k.prefill().endpoint());
      }
      g.writeEndObject();
    }
    g.writeNumberField("append_tokens", k.appendTokens());
    g.writeArrayFieldStart("attempts");
    for (io.kvselect.core.kvc.KvcAnswer.Probe a : k.attempts()) {
      g.writeStartObject();
      u64(g, "worker_id", a.workerId());
      g.writeNumberField("dp_rank", a.dpRank());
      g.writeStringField("reason", a.reason());
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeEndObject();
  }

  private static void overlap(JsonGenerator g, OverlapSummary o) throws IOException {
    g.writeObjectFieldStart("overlap");
    g.writeNumberField("longest_matched", o.longestMatched());
    g.writeNumberField("gpu", o.gpu());
    g.writeObjectFieldStart("dp");
    for (Map.Entry<Integer, Long> e : o.dp().entrySet()) {
      g.writeNumberField(Integer.toString(e.getKey()), e.getValue());
    }
    g.writeEndObject();
    g.writeNumberField("cpu", o.cpu());
    g.writeNumberField("disk", o.disk());
    g.writeEndObject();
  }

  private static void workerLoad(JsonGenerator g, WorkerLoad w) throws IOException {
    g.writeObjectFieldStart("worker_load");
    g.writeNumberField("active_prefill_tokens", w.activePrefillTokens());
    g.writeNumberField("prefill_token_capacity", w.prefillTokenCapacity());
    if (w.totalKvBlocks() != null) {
      g.writeNumberField("total_kv_blocks", w.totalKvBlocks());
    }
    if (w.prefillBusy() != null) {
      g.writeBooleanField("prefill_busy", w.prefillBusy());
    }
    g.writeEndObject();
  }

  private static void kvHint(JsonGenerator g, KvHint h) throws IOException {
    g.writeObjectFieldStart("kv_hint");
    g.writeStringField("protocol_version", "0.1");
    g.writeStringField("message_id", h.messageId());
    g.writeArrayFieldStart("actions");
    g.writeStartObject();
    g.writeStringField("action_id", "a1");
    g.writeStringField("action_type", "kv.fetch");
    g.writeStringField("action_version", "1.0");
    g.writeObjectFieldStart("payload");
    g.writeStringField("source_control_endpoint", h.sourceControlEndpoint());
    u64Array(g, "block_hashes", h.blockHashes());
    g.writeEndObject();
    g.writeEndObject();
    g.writeEndArray();
    g.writeEndObject();
  }

  static byte[] reservation(Reservation r) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeStringField("selection_id", r.selectionId());
          g.writeStringField("model_name", r.partition().modelName());
          g.writeStringField("routing_group", r.partition().routingGroup());
          u64(g, "worker_id", r.workerId());
          g.writeNumberField("dp_rank", r.dpRank());
          g.writeStringField("endpoint", r.endpoint());
          g.writeEndObject();
        });
  }

  static byte[] ready(ReadyStatus r, IndexRecovery.Outcome recovery) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeBooleanField("ready", r.ready());
          if (recovery != null && !recovery.state().equals("disabled")) {
            g.writeObjectFieldStart("index_recovery");
            g.writeStringField("state", recovery.state());
            if (recovery.peer() != null) {
              g.writeStringField("peer", recovery.peer());
            }
            g.writeNumberField("blocks", recovery.blocks());
            if (recovery.error() != null) {
              g.writeStringField("error", recovery.error());
            }
            g.writeEndObject();
          }
          g.writeNumberField("schedulable_workers", r.schedulableWorkers());
          g.writeArrayFieldStart("workers");
          for (WorkerRecord w : r.workers()) {
            WorkerJsonWriter.write(g, w, null);
          }
          g.writeEndArray();
          g.writeEndObject();
        });
  }

  private static void potentialLoad(JsonGenerator g, PotentialLoad l) throws IOException {
    g.writeStartObject();
    u64(g, "worker_id", l.workerId());
    g.writeNumberField("dp_rank", l.dpRank());
    g.writeNumberField("potential_prefill_tokens", l.potentialPrefillTokens());
    g.writeNumberField("potential_decode_blocks", l.potentialDecodeBlocks());
    g.writeNumberField("active_requests", l.activeRequests());
    g.writeEndObject();
  }

  static byte[] loads(List<PartitionLoads> parts) {
    return write(
        g -> {
          g.writeStartArray();
          for (PartitionLoads p : parts) {
            g.writeStartObject();
            g.writeStringField("model_name", p.partition().modelName());
            g.writeStringField("routing_group", p.partition().routingGroup());
            g.writeArrayFieldStart("loads");
            for (PotentialLoad l : p.loads()) {
              potentialLoad(g, l);
            }
            g.writeEndArray();
            g.writeNumberField("pending_count", p.pendingCount());
            g.writeNumberField("pending_isl_tokens", p.pendingIslTokens());
            g.writeEndObject();
          }
          g.writeEndArray();
        });
  }

  static byte[] potentialLoads(List<PotentialLoad> loads) {
    return write(
        g -> {
          g.writeStartArray();
          for (PotentialLoad l : loads) {
            potentialLoad(g, l);
          }
          g.writeEndArray();
        });
  }

  static byte[] overlapScores(OverlapReport r) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeNumberField("block_size", r.blockSize());
          g.writeNumberField("num_blocks", r.numBlocks());
          g.writeArrayFieldStart("workers");
          for (OverlapRow w : r.workers()) {
            g.writeStartObject();
            u64(g, "worker_id", w.workerId());
            g.writeNumberField("dp_rank", w.dpRank());
            g.writeNumberField("device_blocks", w.deviceBlocks());
            g.writeNumberField("host_pinned_blocks", w.hostPinnedBlocks());
            g.writeNumberField("disk_blocks", w.diskBlocks());
            g.writeNumberField("host_pinned_extension_blocks", w.hostPinnedExtensionBlocks());
            g.writeNumberField("disk_extension_blocks", w.diskExtensionBlocks());
            g.writeNullField("shared_beyond_device_blocks");
            g.writeNumberField("router_credit_blocks", w.routerCreditBlocks());
            g.writeEndObject();
          }
          g.writeEndArray();
          g.writeObjectFieldStart("shared_cache");
          g.writeBooleanField("enabled", false);
          g.writeNumberField("total_hit_blocks", 0);
          g.writeArrayFieldStart("ranges");
          g.writeEndArray();
          g.writeNullField("error");
          g.writeEndObject();
          g.writeEndObject();
        });
  }

  /** The {@code /dump} recovery format: one single-block Stored event per (rank, tier, block). */
  static byte[] dump(
      List<PartitionDump> parts,
      java.util.function.Function<PartitionKey, Map<WorkerRank, Long>> marks) {
    return write(
        g -> {
          g.writeStartObject();
          for (PartitionDump p : parts) {
            g.writeObjectFieldStart(p.partition().toString());
            if (p.blockSize() != null) {
              g.writeNumberField("block_size", p.blockSize());
            } else {
              g.writeNullField("block_size");
            }
            g.writeArrayFieldStart("events");
            long eventId = 0;
            for (StoredBlock b : p.blocks()) {
              g.writeStartObject();
              u64(g, "worker_id", b.rank().workerId());
              g.writeStringField("storage_tier", b.tier().wireName());
              g.writeObjectFieldStart("event");
              g.writeNumberField("event_id", eventId++);
              g.writeObjectFieldStart("data");
              g.writeObjectFieldStart("stored");
              if (b.hasParent()) {
                u64(g, "parent_hash", b.parentExternalHash());
              } else {
                g.writeNullField("parent_hash");
              }
              g.writeNullField("start_position");
              g.writeArrayFieldStart("blocks");
              g.writeStartObject();
              u64(g, "block_hash", b.externalHash());
              u64(g, "tokens_hash", b.localHash());
              g.writeNullField("mm_extra_info");
              g.writeEndObject();
              g.writeEndArray();
              g.writeEndObject();
              g.writeEndObject();
              g.writeNumberField("dp_rank", b.rank().dpRank());
              g.writeEndObject();
              g.writeEndObject();
            }
            g.writeEndArray();
            Map<WorkerRank, Long> wm = marks.apply(p.partition());
            if (!wm.isEmpty()) {
              g.writeObjectFieldStart("watermarks");
              for (var e : new TreeMap<>(wm).entrySet()) {
                g.writeNumberField(e.getKey().toString(), e.getValue());
              }
              g.writeEndObject();
            }
            g.writeEndObject();
          }
          g.writeEndObject();
        });
  }
}
