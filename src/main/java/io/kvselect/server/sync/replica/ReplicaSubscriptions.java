package io.kvselect.server.sync.replica;

import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventIngestOptions;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The subscribing side of {@link ReplicaSync}: the replica-sync peers this node listens to and the
 * one SUB socket connected to every peer's PUB, subscribed to the booking topic (and to the
 * affinity topic when bindings are exchanged). Received messages are read in bounded batches and
 * handed to {@link ReplicaInbound}.
 *
 * <p>Owner: the peer list is guarded by its own monitor (read and changed from any thread, e.g. the
 * HTTP routes); the SUB socket is created, connected, read and closed only by the sync thread
 * {@code kvselect-replica-sync}, to which {@link ReplicaSync} posts connects and disconnects.
 */
final class ReplicaSubscriptions {

  private static final Logger LOG = LoggerFactory.getLogger(ReplicaSubscriptions.class);

  /** Most messages read from the SUB socket per poll round, so commands and sends interleave. */
  private static final int RECV_BATCH = 1_024;

  private final TreeSet<String> peers = new TreeSet<>();

  /** Owned by the sync thread. */
  private ZMQ.Socket sub;

  /**
   * @param initialPeers {@code --replica-sync-peers}
   * @throws IllegalArgumentException for an invalid endpoint
   */
  ReplicaSubscriptions(List<String> initialPeers) {
    for (String p : initialPeers) {
      peers.add(ReplicaEndpoints.valid(p));
    }
  }

  /** Adds a valid endpoint to the peers; false if it is there already. Any thread. */
  boolean add(String endpoint) {
    synchronized (peers) {
      return peers.add(endpoint);
    }
  }

  /** Removes an endpoint from the peers; false if it was not there. Any thread. */
  boolean remove(String endpoint) {
    synchronized (peers) {
      return peers.remove(endpoint);
    }
  }

  /** The peers, sorted. */
  List<String> peers() {
    synchronized (peers) {
      return List.copyOf(peers);
    }
  }

  /**
   * Creates the SUB socket in {@code ctx}, subscribes it ({@code affinity}: to bindings as well)
   * and connects it to the current peers; sync thread only.
   *
   * @throws RuntimeException when the socket cannot be created
   */
  void open(ZContext ctx, boolean affinity) {
    sub = ctx.createSocket(SocketType.SUB);
    sub.setLinger(0);
    sub.setRcvHWM(ReplicaSync.SEQUENCE_QUEUE);
    sub.setHandshakeIvl(KvEventIngestOptions.HANDSHAKE_IVL_MS);
    sub.subscribe(ReplicaWire.SEQUENCE_TOPIC.getBytes(StandardCharsets.UTF_8));
    if (affinity) {
      sub.subscribe(ReplicaWire.AFFINITY_TOPIC.getBytes(StandardCharsets.UTF_8));
    }
    for (String p : peers()) {
      connect(p);
    }
  }

  /** The SUB socket, for the sync thread's poller; null before {@link #open}. */
  ZMQ.Socket socket() {
    return sub;
  }

  /** Connects the SUB to {@code endpoint}; a failure is logged, not thrown. Sync thread only. */
  void connect(String endpoint) {
    try {
      sub.connect(endpoint);
    } catch (RuntimeException e) {
      LOG.warn("replica sync: cannot connect to {}: {}", endpoint, e.getMessage());
    }
  }

  /** Disconnects the SUB from {@code endpoint}; a failure is logged, not thrown. Sync thread only. */
  void disconnect(String endpoint) {
    try {
      sub.disconnect(endpoint);
    } catch (RuntimeException e) {
      LOG.debug("replica sync: disconnect from {}: {}", endpoint, e.getMessage());
    }
  }

  /**
   * Reads up to {@link #RECV_BATCH} messages and hands each to {@code inbound}; sync thread only.
   *
   * @return true when more may be waiting
   */
  boolean receive(ReplicaInbound inbound, SelectionService service, ReplicatedAffinity affinity) {
    for (int i = 0; i < RECV_BATCH; i++) {
      byte[] topic = sub.recv(ZMQ.DONTWAIT);
      if (topic == null) {
        return false;
      }
      List<byte[]> rest = new ArrayList<>(1);
      while (sub.hasReceiveMore()) {
        rest.add(sub.recv());
      }
      inbound.handle(new String(topic, StandardCharsets.UTF_8), rest, service, affinity);
    }
    return true;
  }
}
