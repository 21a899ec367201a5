package io.kvselect.server.sync.replica;

import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.service.SelectionService;
import io.kvselect.core.session.SessionAffinity;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.security.SecureRandom;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Dynamo's replica sync ({@code --replica-sync-port}, {@code --replica-sync-peers}): a ZMQ PUB bound
 * on the sync port publishes this node's booking lifecycle (and session bindings when affinity is
 * on) in {@link ReplicaWire}'s format, and one SUB socket connected to every peer's PUB receives
 * theirs. A peer's booking is applied through {@link SelectionService#applyPeerLoad} with origin
 * {@code "replica:<router_id>"}; its bindings through {@link ReplicatedAffinity}. There is no ack,
 * order or replay, as in Dynamo: views converge best-effort.
 *
 * <p>This class holds the lifecycle and the sync thread's loop; the publishing side (outbound
 * queues, PUB socket) is {@link ReplicaPublisher}, the subscribing side (peer list, SUB socket,
 * batched reads) {@link ReplicaSubscriptions}.
 *
 * <p>Threading: both sockets, the poller and the ZMQ context are created, used and closed only by
 * the thread {@code kvselect-replica-sync}, which also applies received events. Other threads hand
 * work over through {@link #commands} and the publisher's bounded outbound queues, then {@link
 * #wakeup}; none of them ever blocks. The peer list is guarded by its own monitor (in {@link
 * ReplicaSubscriptions}); {@link #steps} belongs to the verticle's context; the counters are
 * {@link ReplicaCounters}; received messages are applied by {@link ReplicaInbound} on the sync
 * thread. Started and stopped by its {@link ReplicaSyncVerticle}, whose context is the only one
 * that publishes this node's steps.
 */
public final class ReplicaSync implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ReplicaSync.class);

  /** Dynamo's outbound channel capacities. */
  static final int SEQUENCE_QUEUE = 100_000;

  static final int AFFINITY_QUEUE = 4_096;

  /** The configured port until the PUB is bound, then the bound one; written by the sync thread before {@link #bound}. */
  private volatile int port;

  private final String bindHost;
  private final boolean affinityEnabled;
  private final long routerId;
  private final String origin;
  private final Queue<Runnable> commands = new ConcurrentLinkedQueue<>();
  private final io.kvselect.server.events.Wakeup wakeup = new io.kvselect.server.events.Wakeup();

  /** Set by a hand-over that signalled {@link #wakeup}, cleared by the sync thread before draining. */
  private final java.util.concurrent.atomic.AtomicBoolean woken =
      new java.util.concurrent.atomic.AtomicBoolean();

  /** Owned by the {@link ReplicaSyncVerticle}'s context, the only caller of {@link #publish}. */
  private final ReplicaSteps steps;

  private final ReplicaCounters counters = new ReplicaCounters();
  private final ReplicaInbound inbound;
  private final ReplicaPublisher publisher = new ReplicaPublisher(counters);
  private final ReplicaSubscriptions subscriptions;
  private final CompletableFuture<Void> bound = new CompletableFuture<>();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private volatile SelectionService service;
  private volatile ReplicatedAffinity affinity;
  private volatile boolean running;
  private volatile Thread thread;

  /**
   * @param port the PUB port (1..65535), or 0 for a free one ({@link #port} reads it once started)
   * @param host the node's {@code --host}: the PUB binds to it, or to {@code *} for a wildcard
   * @param initialPeers {@code --replica-sync-peers}
   * @param affinityEnabled whether bindings are exchanged (session affinity is on)
   */
  public ReplicaSync(int port, String host, List<String> initialPeers, boolean affinityEnabled) {
    this.port = port;
    this.bindHost = ReplicaEndpoints.bindHost(host);
    this.affinityEnabled = affinityEnabled;
    this.routerId = randomNonZero();
    this.origin = "replica:" + Long.toUnsignedString(routerId);
    this.subscriptions = new ReplicaSubscriptions(initialPeers);
    this.inbound = new ReplicaInbound(routerId, counters);
    this.steps = new ReplicaSteps(routerId);
  }

  private static long randomNonZero() {
    SecureRandom r = new SecureRandom();
    long id;
    do {
      id = r.nextLong();
    } while (id == 0);
    return id;
  }

  /** This process's nonzero random id ({@code router_id} and affinity {@code writer_id}). */
  public long routerId() {
    return routerId;
  }

  /** The PUB's port: the bound one once {@link #start} has completed (the configured one before). */
  public int port() {
    return port;
  }

  // ---- wiring ----

  /**
   * Wraps the service's session table so bindings are exchanged; without affinity exchange the
   * table is returned as is. Call at most once, before {@link #start}.
   */
  public SessionAffinity affinity(SessionAffinity table) {
    if (!affinityEnabled) {
      return table;
    }
    ReplicatedAffinity r = new ReplicatedAffinity(table, routerId, this::publishBinding);
    affinity = r;
    return r;
  }

  /**
   * Starts the sync thread for {@code s}: binds the PUB, connects the SUB to the peers. Completes
   * when the PUB is bound, or fails (the thread gone) when it cannot be.
   */
  public CompletableFuture<Void> start(SelectionService s) {
    this.service = s;
    running = true;
    Thread t = new Thread(this::run, "kvselect-replica-sync");
    t.setDaemon(true);
    thread = t;
    t.start();
    return bound;
  }

  /** Stops the thread (sockets closed with zero linger); completes when it has exited. Idempotent. */
  @Override
  public void close() {
    stop();
  }

  public CompletableFuture<Void> stop() {
    running = false;
    if (thread == null) {
      closed.complete(null);
    }
    wakeup.signal();
    return closed;
  }

  // ---- peers (HTTP routes) ----

  /** Outcome of a membership change. */
  public enum PeerChange {
    ADDED,
    PRESENT,
    REMOVED,
    NOT_FOUND
  }

  /**
   * Adds a peer and connects to it. Any thread; never blocks.
   *
   * @throws IllegalArgumentException for an invalid endpoint
   * @throws IllegalStateException when the sync thread is not running
   */
  public PeerChange register(String endpoint) {
    String e = ReplicaEndpoints.valid(endpoint);
    requireRunning();
    if (!subscriptions.add(e)) {
      return PeerChange.PRESENT;
    }
    post(() -> subscriptions.connect(e));
    return PeerChange.ADDED;
  }

  /** Removes a peer and disconnects from it; see {@link #register}. */
  public PeerChange deregister(String endpoint) {
    String e = ReplicaEndpoints.valid(endpoint);
    requireRunning();
    if (!subscriptions.remove(e)) {
      return PeerChange.NOT_FOUND;
    }
    post(() -> subscriptions.disconnect(e));
    return PeerChange.REMOVED;
  }

  /** The peers, sorted. */
  public List<String> peers() {
    return subscriptions.peers();
  }

  private void requireRunning() {
    if (!running || !bound.isDone() || bound.isCompletedExceptionally()) {
      throw new IllegalStateException("replica sync peer manager is unavailable");
    }
  }

  // ---- counters ----

  /** Every nonzero counter as {@code direction topic outcome=n}, for diagnostics. */
  public String countersText() {
    return counters.text();
  }

  /** The count of {@code direction} ("in"/"out") events on {@code topic} with {@code outcome}. */
  public long count(String direction, String topic, String outcome) {
    return counters.count(direction, topic, outcome);
  }

  /** Registers {@code kvselect_replica_sync_events_total} and {@code kvselect_replica_sync_peers}. */
  public void bind(MeterRegistry registry) {
    counters.bind(registry);
    Gauge.builder("kvselect_replica_sync_peers", this, r -> r.peers().size())
        .description("Replica-sync peers this node subscribes to")
        .register(registry);
  }

  // ---- outbound ----

  /**
   * Publishes one of this node's booking steps to the mesh. Called by {@link ReplicaSyncVerticle}'s
   * consumer of the steps the service sends ({@link BusLoadSync}), on that verticle's context
   * only; never blocks (a full outbound queue drops and counts the step).
   */
  void publish(LoadEvent e) {
    ReplicaWire.SequenceEvent out = steps.toWire(e);
    if (out != null) {
      enqueue(ReplicaWire.SEQUENCE_TOPIC, ReplicaWire.encode(out));
    }
  }

  private void publishBinding(ReplicaWire.AffinityEvent e) {
    enqueue(ReplicaWire.AFFINITY_TOPIC, ReplicaWire.encode(e));
  }

  private void enqueue(String topic, byte[] payload) {
    if (!running || !publisher.offer(topic, payload)) {
      counters.inc("out", topic, "dropped");
      return;
    }
    wake();
  }

  private void post(Runnable command) {
    commands.add(command);
    wake();
  }

  /** One pipe write per batch of hand-overs: the owner clears {@link #woken} before it drains. */
  private void wake() {
    if (woken.compareAndSet(false, true)) {
      wakeup.signal();
    }
  }

  // ---- the sync thread ----

  private void run() {
    try (ZContext ctx = new ZContext(1)) {
      try {
        port = publisher.bind(ctx, bindHost, port);
        subscriptions.open(ctx, affinity != null);
      } catch (RuntimeException e) {
        running = false;
        bound.completeExceptionally(
            new IllegalStateException(
                "cannot bind replica sync PUB tcp://"
                    + bindHost
                    + ":"
                    + port
                    + ": "
                    + e.getMessage(),
                e));
        return;
      }
      LOG.info(
          "replica sync: PUB bound on tcp://{}:{}, router_id {}, peers {}",
          bindHost,
          port,
          Long.toUnsignedString(routerId),
          peers());
      bound.complete(null);
      ZMQ.Poller poller = ctx.createPoller(2);
      poller.register(subscriptions.socket(), ZMQ.Poller.POLLIN);
      poller.register(wakeup.channel(), ZMQ.Poller.POLLIN);
      boolean hot = false;
      while (running && !Thread.currentThread().isInterrupted()) {
        poller.poll(hot ? 0 : 1_000);
        wakeup.clear();
        woken.set(false);
        for (Runnable c; (c = commands.poll()) != null; ) {
          c.run();
        }
        publisher.flush();
        hot = subscriptions.receive(inbound, service, affinity);
      }
      poller.close();
    } catch (RuntimeException e) {
      LOG.error("replica sync thread failed", e);
      bound.completeExceptionally(e);
    } finally {
      running = false;
      wakeup.close();
      closed.complete(null);
    }
  }

  /** The origin tag of this node's bookings as its replica peers record them. */
  public String origin() {
    return origin;
  }
}
