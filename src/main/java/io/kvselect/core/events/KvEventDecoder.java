package io.kvselect.core.events;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.msgpack.core.MessagePackException;
import org.msgpack.value.ValueType;

/**
 * Decodes the msgpack payload frame of a vLLM or SGLang KV-event batch (see
 * {@code kv_events_wire.md}) into a {@link KvEventBatch}, streaming with msgpack-core's
 * {@code MessageUnpacker} (no intermediate value trees).
 *
 * <p><b>Envelope.</b> An array {@code [ts, events]} or {@code [ts, events, dp_rank]} (rank int or
 * nil; further elements ignored), or a map with keys {@code ts}, {@code events} and
 * {@code data_parallel_rank} / {@code attn_dp_rank} / {@code dp_rank} (unknown keys ignored).
 * Nothing may follow the envelope.
 *
 * <p><b>Events.</b> Each event is decided by its msgpack type: a tagged array decoded by
 * position, or a map with a {@code "type"} key decoded by name. Array {@code BlockStored}:
 * {@code [tag, block_hashes, parent, token_ids, block_size, lora_id, medium, lora_name | {cache_salt},
 * extra_keys, group_idx, kv_cache_spec_kind, sliding_window, locality, ...]}; only the first five
 * are required, later positions may be missing, extra ones are ignored. Array {@code BlockRemoved}:
 * {@code [tag, block_hashes, medium, group_idx, kind, sliding_window, locality, ...]}. Unknown tags
 * drop that event and keep the batch. Fields that every layout has carried (hashes, parent, tokens,
 * block size, medium, lora name, cache salt) are type-checked; the optional tail metadata
 * ({@code extra_keys}, group, kind, locality) is best-effort: a value of another type is ignored.
 *
 * <p><b>Values.</b> Hashes are ints of any width (uint64 above {@code Long.MAX_VALUE} and
 * negative int64 keep their 64 bits) or bins of at least 8 bytes (last 8 bytes, big-endian).
 * Token ids are u32 held in an {@code int} by bits; the eagle bigram form is flattened (see
 * {@link BlockStored}). An empty {@code medium} is treated as absent.
 *
 * <p><b>Failures.</b> Bad input throws {@link MalformedEventException} and nothing else; the
 * whole batch is rejected. Declared lengths are checked against the bytes left, so a payload of
 * n bytes allocates O(n) and decodes in O(n) time.
 *
 * <p>Stateless and thread-safe.
 */
public final class KvEventDecoder {

  private KvEventDecoder() {}

  /** Decodes a whole payload frame. */
  public static KvEventBatch decode(byte[] payload) throws MalformedEventException {
    return decode(payload, 0, payload.length);
  }

  /**
   * Decodes {@code payload[offset .. offset+length)}.
   *
   * @throws IndexOutOfBoundsException if the range is outside {@code payload} (a caller bug, not
   *     bad input)
   */
  public static KvEventBatch decode(byte[] payload, int offset, int length)
      throws MalformedEventException {
    Objects.checkFromIndexSize(offset, length, payload.length);
    if (length == 0) {
      throw new MalformedEventException("empty payload");
    }
    WireReader r = new WireReader(payload, offset, length);
    try {
      KvEventBatch batch = envelope(r);
      if (!r.atEnd()) {
        throw r.malformed("trailing bytes after the batch");
      }
      return batch;
    } catch (IOException | MessagePackException e) {
      throw new MalformedEventException(
          "not a valid msgpack batch (at byte " + r.position() + "): " + e.getMessage(), e);
    }
  }

  private static KvEventBatch envelope(WireReader r) throws IOException, MalformedEventException {
    ValueType t = r.peek();
    if (t == ValueType.MAP) {
      return mapEnvelope(r);
    }
    if (t != ValueType.ARRAY) {
      throw r.malformed("batch must be an array [ts, events, dp_rank] or a map, got " + t);
    }
    int n = r.arrayHeader("batch");
    if (n < 2) {
      throw r.malformed("batch array has " + n + " elements, needs [ts, events]");
    }
    double ts = r.number("ts");
    List<KvEvent> events = events(r);
    Integer rank = n >= 3 ? dpRank(r) : null;
    r.skip(n - Math.min(n, 3));
    return new KvEventBatch(ts, events, rank);
  }

  private static KvEventBatch mapEnvelope(WireReader r)
      throws IOException, MalformedEventException {
    int n = r.mapHeader("batch");
    double ts = 0.0;
    List<KvEvent> events = null;
    Integer rank = null;
    for (int i = 0; i < n; i++) {
      switch (r.string("batch key")) {
        case "ts" -> ts = r.number("ts");
        case "events" -> events = events(r);
        case "data_parallel_rank", "attn_dp_rank", "dp_rank" -> rank = dpRank(r);
        default -> r.skip();
      }
    }
    if (events == null) {
      throw r.malformed("batch map without \"events\"");
    }
    return new KvEventBatch(ts, events, rank);
  }

  private static Integer dpRank(WireReader r) throws IOException, MalformedEventException {
    return r.tryNil() ? null : (int) r.integer("dp_rank", Integer.MIN_VALUE, Integer.MAX_VALUE);
  }

  private static List<KvEvent> events(WireReader r) throws IOException, MalformedEventException {
    int n = r.arrayHeader("events");
    List<KvEvent> out = new ArrayList<>(Math.min(n, 64));
    for (int i = 0; i < n; i++) {
      ValueType t = r.peek();
      KvEvent e;
      if (t == ValueType.ARRAY) {
        e = arrayEvent(r);
      } else if (t == ValueType.MAP) {
        e = EventFields.read(r).toEvent(r);
      } else {
        throw r.malformed("event must be an array or a map, got " + t);
      }
      if (e != null) {
        out.add(e);
      }
    }
    return out;
  }

  private static KvEvent arrayEvent(WireReader r) throws IOException, MalformedEventException {
    int n = r.arrayHeader("event");
    if (n == 0) {
      throw r.malformed("empty event array");
    }
    String tag = r.string("event tag");
    return switch (tag) {
      case "BlockStored" -> storedArray(r, n - 1);
      case "BlockRemoved" -> removedArray(r, n - 1);
      case "AllBlocksCleared" -> {
        r.skip(n - 1);
        yield new AllBlocksCleared();
      }
      default -> {
        r.skip(n - 1);
        yield null;
      }
    };
  }

  private static BlockStored storedArray(WireReader r, int n)
      throws IOException, MalformedEventException {
    if (n < 4) {
      throw r.malformed("BlockStored array has " + (n + 1) + " elements, needs at least 5");
    }
    EventFields f = new EventFields();
    f.blockHashes = r.hashes("block_hashes");
    f.parentHash(r);
    f.tokenIds(r);
    f.blockSize(r);
    if (n >= 5) {
      r.skip();
    }
    if (n >= 6) {
      f.medium = emptyToNull(r.optionalString("medium"));
    }
    if (n >= 7) {
      loraNameOrMetadata(r, f);
    }
    if (n >= 8) {
      f.mmHashes = r.extraKeys(f.loraName);
    }
    int tail = Math.max(n - 8, 0);
    r.skip(tail - f.trailingMetadata(r, tail));
    return f.toStored(r);
  }

  private static BlockRemoved removedArray(WireReader r, int n)
      throws IOException, MalformedEventException {
    if (n < 1) {
      throw r.malformed("BlockRemoved array without block_hashes");
    }
    EventFields f = new EventFields();
    f.blockHashes = r.hashes("block_hashes");
    if (n >= 2) {
      f.medium = emptyToNull(r.optionalString("medium"));
    }
    int tail = Math.max(n - 2, 0);
    r.skip(tail - f.trailingMetadata(r, tail));
    return f.toRemoved();
  }

  /** Position 7: vLLM's {@code lora_name} (str or nil) or SGLang's metadata map. */
  private static void loraNameOrMetadata(WireReader r, EventFields f)
      throws IOException, MalformedEventException {
    if (r.peek() != ValueType.MAP) {
      f.loraName = emptyToNull(r.optionalString("lora_name"));
      return;
    }
    int n = r.mapHeader("BlockStored metadata");
    for (int i = 0; i < n; i++) {
      if ("cache_salt".equals(r.string("metadata key"))) {
        f.cacheSalt = emptyToNull(r.optionalString("cache_salt"));
      } else {
        r.skip();
      }
    }
  }

  static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
