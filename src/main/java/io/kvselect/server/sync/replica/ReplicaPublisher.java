package io.kvselect.server.sync.replica;

import io.kvselect.server.events.KvEventIngestOptions;
import java.util.concurrent.ArrayBlockingQueue;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The publishing side of {@link ReplicaSync}: this node's outbound frames (its booking steps and,
 * with affinity exchange, its session bindings) in two bounded queues, and the PUB socket bound on
 * the sync port that sends them to every subscribed peer. A full queue or a refused send drops the
 * frame and counts it ({@code out <topic> dropped}); nothing here blocks.
 *
 * <p>Owner: the queues take frames from any thread ({@link #offer}) and are drained only by the
 * sync thread {@code kvselect-replica-sync} ({@link #flush}), which alone creates, uses and
 * closes the PUB socket (with its {@link ZContext}).
 */
final class ReplicaPublisher {

  private record Frame(String topic, byte[] payload) {}

  private final ArrayBlockingQueue<Frame> sequenceOut =
      new ArrayBlockingQueue<>(ReplicaSync.SEQUENCE_QUEUE);
  private final ArrayBlockingQueue<Frame> affinityOut =
      new ArrayBlockingQueue<>(ReplicaSync.AFFINITY_QUEUE);
  private final ReplicaCounters counters;

  /** Owned by the sync thread. */
  private ZMQ.Socket pub;

  ReplicaPublisher(ReplicaCounters counters) {
    this.counters = counters;
  }

  /**
   * Queues a frame of {@code topic} ({@link ReplicaWire#SEQUENCE_TOPIC} or {@link
   * ReplicaWire#AFFINITY_TOPIC}, each with its own queue). Any thread; never blocks.
   *
   * @return false when that queue is full (the caller counts the drop)
   */
  boolean offer(String topic, byte[] payload) {
    ArrayBlockingQueue<Frame> q =
        ReplicaWire.SEQUENCE_TOPIC.equals(topic) ? sequenceOut : affinityOut;
    return q.offer(new Frame(topic, payload));
  }

  /**
   * Creates the PUB socket in {@code ctx} and binds it on {@code bindHost}; sync thread only.
   *
   * @param port the configured port, 0 for a free one
   * @return the bound port ({@code port} itself unless it was 0)
   * @throws RuntimeException when the socket cannot be created or bound
   */
  int bind(ZContext ctx, String bindHost, int port) {
    pub = ctx.createSocket(SocketType.PUB);
    pub.setLinger(0);
    pub.setSndHWM(ReplicaSync.SEQUENCE_QUEUE);
    // JeroMQ 0.6.0 leaves a few fresh connections without a handshake until this timer fires
    // (30 s by default): see KvEventIngestOptions.HANDSHAKE_IVL_MS
    pub.setHandshakeIvl(KvEventIngestOptions.HANDSHAKE_IVL_MS);
    if (bindHost.startsWith("[")) {
      pub.setIPv6(true);
    }
    pub.bind("tcp://" + bindHost + ":" + (port == 0 ? "*" : Integer.toString(port)));
    return port == 0 ? ReplicaEndpoints.boundPort(pub.getLastEndpoint()) : port;
  }

  /** Sends every queued frame, the booking steps first; sync thread only. */
  void flush() {
    send(sequenceOut);
    send(affinityOut);
  }

  private void send(ArrayBlockingQueue<Frame> q) {
    for (Frame f; (f = q.poll()) != null; ) {
      boolean ok = pub.sendMore(f.topic()) && pub.send(f.payload(), ZMQ.DONTWAIT);
      counters.inc("out", f.topic(), ok ? "sent" : "dropped");
    }
  }
}
