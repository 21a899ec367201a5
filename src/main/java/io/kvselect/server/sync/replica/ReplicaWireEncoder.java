package io.kvselect.server.sync.replica;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * The encoding half of {@link ReplicaWire}: writes a {@link ReplicaWire.SequenceEvent} or a {@link
 * ReplicaWire.AffinityEvent} as the msgpack payload Dynamo's replica sync expects (the layout is
 * described on {@link ReplicaWire}; {@link ReplicaWireDecoder} reads it back). Unsigned 64-bit
 * values held in a {@code long} are written as msgpack uint64. Stateless and thread-safe.
 */
final class ReplicaWireEncoder {

  private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

  private ReplicaWireEncoder() {}

  static byte[] encode(ReplicaWire.SequenceEvent e) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packMapHeader(4);
      p.packString("model_name").packString(e.modelName());
      p.packString("routing_group").packString(e.routingGroup());
      p.packString("block_size");
      p.packLong(Integer.toUnsignedLong(e.blockSize()));
      p.packString("event");
      p.packMapHeader(5);
      p.packString("request_id").packString(e.requestId());
      p.packString("worker").packMapHeader(2);
      p.packString("worker_id");
      packU64(p, e.workerId());
      p.packString("dp_rank");
      p.packLong(Integer.toUnsignedLong(e.dpRank()));
      p.packString("data");
      switch (e.kind()) {
        case FREE -> p.packString("Free");
        case MARK_PREFILL_COMPLETED -> p.packString("MarkPrefillCompleted");
        case ADD_REQUEST -> {
          p.packMapHeader(1).packString("AddRequest").packMapHeader(4);
          p.packString("token_sequence");
          if (e.tokenSequence() == null) {
            p.packNil();
          } else {
            p.packArrayHeader(e.tokenSequence().length);
            for (long h : e.tokenSequence()) {
              packU64(p, h);
            }
          }
          p.packString("track_prefill_tokens").packBoolean(e.trackPrefillTokens());
          p.packString("expected_output_tokens");
          if (e.expectedOutputTokens() == null) {
            p.packNil();
          } else {
            p.packLong(Integer.toUnsignedLong(e.expectedOutputTokens()));
          }
          p.packString("prefill_load_hint");
          if (e.prefillTokens() == null) {
            p.packNil();
          } else {
            p.packMapHeader(2);
            p.packString("initial_effective_prefill_tokens");
            packU64(p, e.prefillTokens());
            p.packString("expected_prefill_duration").packNil();
          }
        }
        default -> throw new IllegalStateException(e.kind().toString());
      }
      p.packString("router_id");
      packU64(p, e.routerId());
      p.packString("lora_name");
      if (e.loraName() == null) {
        p.packNil();
      } else {
        p.packString(e.loraName());
      }
      return p.toByteArray();
    } catch (IOException x) {
      throw new UncheckedIOException(x);
    }
  }

  static byte[] encode(ReplicaWire.AffinityEvent e) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packMapHeader(7);
      p.packString("model_name").packString(e.modelName());
      p.packString("routing_group").packString(e.routingGroup());
      p.packString("session_id").packString(e.sessionId());
      p.packString("worker_id");
      packU64(p, e.workerId());
      p.packString("dp_rank");
      if (e.dpRank() == null) {
        p.packNil();
      } else {
        p.packLong(Integer.toUnsignedLong(e.dpRank()));
      }
      p.packString("sequence");
      packU64(p, e.sequence());
      p.packString("writer_id");
      packU64(p, e.writerId());
      return p.toByteArray();
    } catch (IOException x) {
      throw new UncheckedIOException(x);
    }
  }

  private static void packU64(MessageBufferPacker p, long v) throws IOException {
    if (v >= 0) {
      p.packLong(v);
    } else {
      p.packBigInteger(BigInteger.valueOf(v).add(TWO_64));
    }
  }
}
