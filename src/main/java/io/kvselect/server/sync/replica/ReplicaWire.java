package io.kvselect.server.sync.replica;

/**
 * Dynamo's replica-sync wire: two ZMQ frames {@code [topic, payload]}, the payload a msgpack map
 * with named fields. The active-sequence topic carries a {@code ScopedReplicaEvent} envelope of
 * exactly four keys ({@code model_name, routing_group, block_size, event}); its {@code event} is an
 * {@code ActiveSequenceEvent} ({@code request_id, worker{worker_id, dp_rank}, data, router_id,
 * lora_name}) whose {@code data} is externally tagged: {@code {"AddRequest": {...}}}, or the bare
 * string {@code "Free"} / {@code "MarkPrefillCompleted"} (a one-key map {@code {"Free": nil}} is
 * accepted too). The affinity topic carries a flat map {@code model_name, routing_group,
 * session_id, worker_id, dp_rank, sequence, writer_id}. Unsigned 64-bit values travel as msgpack
 * uint64 and are held here in a {@code long} with the same bits.
 *
 * <p>Decoding never throws anything but {@link Rejected}; unknown extra keys are ignored, as
 * serde does; a payload naming its group {@code tenant_id} instead of {@code routing_group} (the
 * legacy schema Dynamo's newest envelope refuses) is rejected as {@code legacy_tenant_id}.
 *
 * <p>This class holds the wire's vocabulary (topics, events, {@link Rejected}) and its entry
 * points; the encoders are {@link ReplicaWireEncoder}, the bounds-checked decoders {@link
 * ReplicaWireDecoder}, kept side by side in this package so the two stay in step. Stateless and
 * thread-safe.
 */
public final class ReplicaWire {

  /** Active-sequence lifecycle. */
  public static final String SEQUENCE_TOPIC = "dynamo.slot-tracker.v1";

  /** Session bindings (only exchanged when session affinity is on). */
  public static final String AFFINITY_TOPIC = "dynamo.session-affinity.v1";

  private ReplicaWire() {}

  /** What happened to a booking. */
  public enum Kind {
    ADD_REQUEST,
    FREE,
    MARK_PREFILL_COMPLETED
  }

  /**
   * One {@code ScopedReplicaEvent}. For {@link Kind#ADD_REQUEST}: {@code tokenSequence} (the
   * booking's tracked sequence hashes, null for none), {@code trackPrefillTokens},
   * {@code expectedOutputTokens} (null for none) and {@code prefillTokens} (the prefill load hint's
   * {@code initial_effective_prefill_tokens}, null without a hint); other kinds leave them unset.
   */
  public record SequenceEvent(
      String modelName,
      String routingGroup,
      int blockSize,
      String requestId,
      long workerId,
      int dpRank,
      Kind kind,
      long[] tokenSequence,
      boolean trackPrefillTokens,
      Integer expectedOutputTokens,
      Long prefillTokens,
      long routerId,
      String loraName) {}

  /** One replicated session binding with its version {@code (sequence, writer_id)}. */
  public record AffinityEvent(
      String modelName,
      String routingGroup,
      String sessionId,
      long workerId,
      Integer dpRank,
      long sequence,
      long writerId) {}

  /** Why a payload was refused; {@link #reason} is the metrics label. */
  public static final class Rejected extends Exception {
    private final String reason;

    Rejected(String reason, String message) {
      super(message, null, false, false);
      this.reason = reason;
    }

    public String reason() {
      return reason;
    }
  }

  /** This event as its topic's payload ({@link ReplicaWireEncoder}). */
  public static byte[] encode(SequenceEvent e) {
    return ReplicaWireEncoder.encode(e);
  }

  /** This binding as its topic's payload ({@link ReplicaWireEncoder}). */
  public static byte[] encode(AffinityEvent e) {
    return ReplicaWireEncoder.encode(e);
  }

  /** A {@link #SEQUENCE_TOPIC} payload, checked ({@link ReplicaWireDecoder}). */
  public static SequenceEvent decodeSequence(byte[] payload) throws Rejected {
    return ReplicaWireDecoder.decodeSequence(payload);
  }

  /** An {@link #AFFINITY_TOPIC} payload, checked ({@link ReplicaWireDecoder}). */
  public static AffinityEvent decodeAffinity(byte[] payload) throws Rejected {
    return ReplicaWireDecoder.decodeAffinity(payload);
  }
}
