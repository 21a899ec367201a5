package io.kvselect.server.sync.replica;

import io.kvselect.server.sync.replica.ReplicaWire.AffinityEvent;
import io.kvselect.server.sync.replica.ReplicaWire.Kind;
import io.kvselect.server.sync.replica.ReplicaWire.Rejected;
import io.kvselect.server.sync.replica.ReplicaWire.SequenceEvent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.IntegerValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

/**
 * The decoding half of {@link ReplicaWire}: reads a payload written by Dynamo (or {@link
 * ReplicaWireEncoder}) back into a {@link SequenceEvent} or an {@link AffinityEvent}, checking
 * bounds before anything is allocated ({@link #requirePlausibleShape}) and every field's type and
 * range. Never throws anything but {@link Rejected}; unknown extra keys are ignored; a legacy
 * {@code tenant_id} payload is rejected as {@code legacy_tenant_id}. Stateless and thread-safe.
 */
final class ReplicaWireDecoder {

  /** Deepest nesting a payload may have (Dynamo's messages nest four levels). */
  static final int MAX_DEPTH = 32;

  private ReplicaWireDecoder() {}

  static SequenceEvent decodeSequence(byte[] payload) throws Rejected {
    Map<Value, Value> env = map(root(payload), "envelope");
    legacy(env);
    String model = string(env, "model_name");
    String group = string(env, "routing_group");
    int blockSize = u32(required(env, "block_size"), "block_size");
    Map<Value, Value> ev = map(required(env, "event"), "event");
    String requestId = string(ev, "request_id");
    Map<Value, Value> worker = map(required(ev, "worker"), "worker");
    long workerId = u64(required(worker, "worker_id"), "worker_id");
    int dpRank = u32(required(worker, "dp_rank"), "dp_rank");
    long routerId = u64(required(ev, "router_id"), "router_id");
    Value lora = ev.get(ValueFactory.newString("lora_name"));
    String loraName = lora == null || lora.isNilValue() ? null : str(lora, "lora_name");
    Value data = required(ev, "data");
    String tag;
    Value body = null;
    if (data.isStringValue()) {
      tag = str(data, "data");
    } else if (data.isMapValue() && data.asMapValue().size() == 1) {
      Map.Entry<Value, Value> only = data.asMapValue().map().entrySet().iterator().next();
      tag = str(only.getKey(), "data");
      body = only.getValue();
    } else {
      throw malformed("data is neither a variant name nor a one-key map");
    }
    switch (tag) {
      case "Free", "MarkPrefillCompleted" -> {
        if (body != null
            && !body.isNilValue()
            && !(body.isArrayValue() && body.asArrayValue().size() == 0)) {
          throw malformed(tag + " carries a value");
        }
        return new SequenceEvent(
            model,
            group,
            blockSize,
            requestId,
            workerId,
            dpRank,
            tag.equals("Free") ? Kind.FREE : Kind.MARK_PREFILL_COMPLETED,
            null,
            false,
            null,
            null,
            routerId,
            loraName);
      }
      case "AddRequest" -> {
        if (body == null) {
          throw malformed("AddRequest without fields");
        }
        Map<Value, Value> add = map(body, "AddRequest");
        Value seq = required(add, "token_sequence");
        long[] tokens = null;
        if (!seq.isNilValue()) {
          if (!seq.isArrayValue()) {
            throw malformed("token_sequence is not an array");
          }
          var arr = seq.asArrayValue();
          tokens = new long[arr.size()];
          for (int i = 0; i < tokens.length; i++) {
            tokens[i] = hash(arr.get(i));
          }
        }
        Value track = add.get(ValueFactory.newString("track_prefill_tokens"));
        boolean trackPrefill = true;
        if (track != null && !track.isNilValue()) {
          if (!track.isBooleanValue()) {
            throw malformed("track_prefill_tokens is not a boolean");
          }
          trackPrefill = track.asBooleanValue().getBoolean();
        }
        Value out = required(add, "expected_output_tokens");
        Integer expected = out.isNilValue() ? null : u32(out, "expected_output_tokens");
        Value hint = add.get(ValueFactory.newString("prefill_load_hint"));
        Long prefill = null;
        if (hint != null && !hint.isNilValue()) {
          Map<Value, Value> h = map(hint, "prefill_load_hint");
          prefill =
              u64(
                  required(h, "initial_effective_prefill_tokens"),
                  "initial_effective_prefill_tokens");
          if (prefill < 0) {
            throw malformed("initial_effective_prefill_tokens out of range");
          }
        }
        return new SequenceEvent(
            model,
            group,
            blockSize,
            requestId,
            workerId,
            dpRank,
            Kind.ADD_REQUEST,
            tokens,
            trackPrefill,
            expected,
            prefill,
            routerId,
            loraName);
      }
      default -> throw malformed("unknown data variant " + tag);
    }
  }

  static AffinityEvent decodeAffinity(byte[] payload) throws Rejected {
    Map<Value, Value> m = map(root(payload), "binding");
    legacy(m);
    Value dp = required(m, "dp_rank");
    return new AffinityEvent(
        string(m, "model_name"),
        string(m, "routing_group"),
        string(m, "session_id"),
        u64(required(m, "worker_id"), "worker_id"),
        dp.isNilValue() ? null : u32(dp, "dp_rank"),
        u64(required(m, "sequence"), "sequence"),
        u64(required(m, "writer_id"), "writer_id"));
  }

  /** A map that names its group {@code tenant_id} instead of {@code routing_group} is the old schema. */
  private static void legacy(Map<Value, Value> m) throws Rejected {
    if (m.containsKey(ValueFactory.newString("tenant_id"))
        && !m.containsKey(ValueFactory.newString("routing_group"))) {
      throw new Rejected(
          "legacy_tenant_id", "legacy payload with tenant_id instead of routing_group");
    }
  }

  /** The whole payload as one value; trailing bytes or a truncated value are malformed. */
  private static Value root(byte[] payload) throws Rejected {
    requirePlausibleShape(payload);
    try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
      Value v = u.unpackValue();
      if (u.hasNext()) {
        throw malformed("trailing bytes after the payload");
      }
      return v;
    } catch (IOException | RuntimeException e) {
      throw malformed("not msgpack: " + e.getMessage());
    }
  }

  /**
   * Walks the payload's structure without building it, so that a frame declaring an array, map,
   * string or binary longer than the frame itself, or nested deeper than {@link #MAX_DEPTH}, is
   * refused before {@link MessageUnpacker#unpackValue} would allocate for it (a 5-byte array32
   * header claiming 2^31 elements would take the heap) or recurse for it.
   */
  private static void requirePlausibleShape(byte[] payload) throws Rejected {
    try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
      long[] pending = new long[MAX_DEPTH + 1];
      int depth = 0;
      pending[0] = 1;
      while (depth >= 0) {
        if (pending[depth] == 0) {
          depth--;
          continue;
        }
        pending[depth]--;
        if (!u.hasNext()) {
          throw malformed("truncated payload");
        }
        long left = payload.length - u.getTotalReadBytes();
        org.msgpack.core.MessageFormat f = u.getNextFormat();
        long children;
        switch (f.getValueType()) {
          case ARRAY -> children = u.unpackArrayHeader();
          case MAP -> children = 2L * u.unpackMapHeader();
          default -> {
            u.skipValue();
            continue;
          }
        }
        if (children < 0 || children > left) {
          throw malformed("a container declares " + children + " values in " + left + " bytes");
        }
        if (depth == MAX_DEPTH) {
          throw malformed("nested deeper than " + MAX_DEPTH);
        }
        pending[++depth] = children;
      }
    } catch (IOException | RuntimeException e) {
      throw malformed("not msgpack: " + e.getMessage());
    }
  }

  private static Map<Value, Value> map(Value v, String what) throws Rejected {
    if (!v.isMapValue()) {
      throw malformed(what + " is not a map");
    }
    return v.asMapValue().map();
  }

  private static Value required(Map<Value, Value> m, String key) throws Rejected {
    Value v = m.get(ValueFactory.newString(key));
    if (v == null) {
      throw malformed("missing " + key);
    }
    return v;
  }

  private static String string(Map<Value, Value> m, String key) throws Rejected {
    return str(required(m, key), key);
  }

  private static String str(Value v, String what) throws Rejected {
    if (!v.isStringValue()) {
      throw malformed(what + " is not a string");
    }
    byte[] raw = v.asStringValue().asByteArray();
    var decoder = StandardCharsets.UTF_8.newDecoder();
    try {
      return decoder.decode(java.nio.ByteBuffer.wrap(raw)).toString();
    } catch (java.nio.charset.CharacterCodingException e) {
      throw malformed(what + " is not UTF-8");
    }
  }

  private static long u64(Value v, String what) throws Rejected {
    if (!v.isIntegerValue()) {
      throw malformed(what + " is not an integer");
    }
    IntegerValue i = v.asIntegerValue();
    if (i.isInLongRange()) {
      long x = i.toLong();
      if (x < 0) {
        throw malformed(what + " is negative");
      }
      return x;
    }
    return i.toBigInteger().longValue();
  }

  /** A sequence hash: u64, or a signed i64 with the same bits. */
  private static long hash(Value v) throws Rejected {
    if (!v.isIntegerValue()) {
      throw malformed("token_sequence element is not an integer");
    }
    IntegerValue i = v.asIntegerValue();
    return i.isInLongRange() ? i.toLong() : i.toBigInteger().longValue();
  }

  private static int u32(Value v, String what) throws Rejected {
    long x = u64(v, what);
    if (x > 0xFFFF_FFFFL || x < 0) {
      throw malformed(what + " out of u32 range");
    }
    if (x > Integer.MAX_VALUE) {
      throw malformed(what + " too large");
    }
    return (int) x;
  }

  private static Rejected malformed(String message) {
    return new Rejected("malformed", message);
  }
}
