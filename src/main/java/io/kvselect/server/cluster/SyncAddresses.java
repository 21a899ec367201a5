package io.kvselect.server.cluster;

/**
 * Event-bus addresses of node-to-node synchronisation (load, catalog, index recovery). Both are
 * cluster-wide; bodies are JSON documents of {@link SyncCodec}.
 */
public final class SyncAddresses {

  /** Published by every node: its sequenced stream of load steps, digests and catalog changes. */
  public static final String STREAM = "kvselect.sync.stream";

  /**
   * Header of a {@link #STREAM} message naming its sender's node id, so a node drops its own
   * publications (a publish reaches the sender's consumer too) without parsing them.
   */
  public static final String FROM_HEADER = "kvselect-from";

  /** Prefix of each node's own address: digest requests and index-recovery requests. */
  public static final String NODE_PREFIX = "kvselect.sync.node.";

  /** Prefix of each node's lifecycle address: steps forwarded to the node that holds the booking. */
  public static final String LIFECYCLE_PREFIX = "kvselect.sync.lifecycle.";

  private SyncAddresses() {}

  /** Where lifecycle steps for bookings node {@code nodeId} holds are sent ({@link BusLifecycleForwarder}). */
  public static String lifecycle(String nodeId) {
    return LIFECYCLE_PREFIX + nodeId;
  }

  /** The point-to-point address of node {@code nodeId}. */
  public static String node(String nodeId) {
    return NODE_PREFIX + nodeId;
  }
}
