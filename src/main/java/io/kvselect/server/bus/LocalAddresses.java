package io.kvselect.server.bus;

import java.util.List;

/**
 * The node-internal event-bus addresses: hand-offs between the verticles of one node. Each is
 * consumed by a {@code localConsumer} of the one verticle that owns the state behind it, and sent
 * to with {@link LocalCodec#options()} (local only, core records passed by reference), so nothing
 * sent here ever reaches another member or an application on the cluster. The cluster-wide
 * addresses are {@link BusAddresses} (the API) and {@code SyncAddresses} (node-to-node sync).
 */
public final class LocalAddresses {

  private LocalAddresses() {}

  /**
   * The selection service's booking steps ({@code core.load.LoadEvent}: booked, prefill complete,
   * freed) for Dynamo's replica sync; consumed by {@code ReplicaSyncVerticle}, which publishes
   * them on its ZMQ PUB. Fire and forget: a step is handed over, never answered.
   */
  public static final String REPLICA_LOAD = "kvselect.replica.load";

  /**
   * The prefix of the index-shard addresses: {@link #indexShard}{@code (s)} carries each poll
   * round's decoded KV-event batches and removals for shard {@code s}; consumed by that shard's
   * {@code IndexShardVerticle}, its only writer.
   */
  public static final String INDEX_SHARD_PREFIX = "kvselect.index.shard.";

  /** The address of index shard {@code shard}. */
  public static String indexShard(int shard) {
    return INDEX_SHARD_PREFIX + shard;
  }

  /**
   * The prefix of the index-shard read addresses: {@link #indexRead}{@code (s)} carries a
   * query's block hashes for one partition and is answered with shard {@code s}'s overlap; consumed
   * by that shard's {@code IndexShardVerticle}. Used only when selections read the index over the
   * bus ({@code BusIndexShards}, a measured alternative to the direct read; {@code docs/design.md}).
   */
  public static final String INDEX_READ_PREFIX = "kvselect.index.read.";

  /** The read address of index shard {@code shard}. */
  public static String indexRead(int shard) {
    return INDEX_READ_PREFIX + shard;
  }

  /**
   * Housekeeping of the node's session table ({@code core.session.SessionAffinity}: the idle
   * sweep, dropping a removed worker's bindings), each answered with the table's result or its
   * exception; consumed by {@code SessionAffinityVerticle}, the table's owner.
   */
  public static final String SESSION_AFFINITY = "kvselect.session.affinity";

  /** Every node-internal address (a prefix for the per-shard ones). */
  public static final List<String> ALL =
      List.of(REPLICA_LOAD, INDEX_SHARD_PREFIX, INDEX_READ_PREFIX, SESSION_AFFINITY);
}
