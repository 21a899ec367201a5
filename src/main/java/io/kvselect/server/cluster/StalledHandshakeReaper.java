package io.kvselect.server.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.LifecycleEvent;
import com.hazelcast.instance.EndpointQualifier;
import com.hazelcast.instance.impl.HazelcastInstanceImpl;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.internal.networking.Channel;
import com.hazelcast.internal.server.ServerConnection;
import com.hazelcast.internal.server.ServerConnectionManager;
import com.hazelcast.internal.server.tcp.TcpServerConnection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a member connection this node opened when the other side has not sent a single byte
 * within {@link #limitMillis()}: a member that is paused (SIGSTOP, a frozen VM) or hung.
 *
 * <p>Why (Hazelcast 5.3.8, issue 26473 upstream, also seen on 5.6): the kernel of a paused member
 * still completes TCP connects to its member port, so a connect to it "succeeds". The connecting
 * side writes its protocol header and queues its member handshake; its outbound
 * {@code UnifiedProtocolEncoder} then answers "clean" until the peer's protocol header arrives,
 * and {@code NioOutboundPipeline.postProcessClean}, seeing frames still queued, puts the pipeline
 * back on its output thread's task queue without a wake-up. {@code NioThread.processTaskQueue}
 * drains that queue until it is empty before it selects again, so the thread runs that pipeline
 * without end and never selects: every other connection it serves that waits for a writable
 * socket (a partial write, or a write handed over by a selection-key wake-up, which is how
 * Hazelcast hands writes over once two threads write to one connection) stops until the paused
 * member wakes. When that other connection is the link between two healthy members, their
 * heartbeats stop and they remove each other (the survivors' split of docs/cluster.md, "Known
 * holes"). Closing the unanswered connection ends the loop; Hazelcast connects again when it next
 * needs the member, to the next output thread, and that connection is closed in turn, so no
 * output thread is held longer than the limit plus one scan.
 *
 * <p>Only connections this node opened ({@code Channel.isClientMode()}) that have read nothing
 * are considered: a live member answers the protocol header within milliseconds, and any byte
 * read (its header) exempts the connection for good.
 *
 * <p>Owner: the reaper's own single scheduler thread ({@code kvselect-handshake-reaper}) owns
 * {@code firstSeen}; {@link #closed} is a counter read by {@code /cluster}. The thread ends when
 * the Hazelcast member shuts down or {@link #stop()} is called.
 */
public final class StalledHandshakeReaper {

  private static final Logger LOG = LoggerFactory.getLogger(StalledHandshakeReaper.class);

  /** The limit unless {@value #LIMIT_PROPERTY} says otherwise, in milliseconds. */
  public static final long DEFAULT_LIMIT_MS = 1_000;

  /** System property overriding the limit (milliseconds; 0 turns the reaper off). */
  public static final String LIMIT_PROPERTY = "kvselect.cluster.handshake.limit.ms";

  /** How often the connections are looked at. */
  static final long SCAN_MS = 100;

  private final Supplier<? extends Iterable<ServerConnection>> connections;
  private final long limitMillis;
  private final Map<Integer, Long> firstSeen = new HashMap<>();
  private final AtomicLong closed = new AtomicLong();
  private final ScheduledExecutorService scheduler;

  StalledHandshakeReaper(
      Supplier<? extends Iterable<ServerConnection>> connections, long limitMillis) {
    this.connections = connections;
    this.limitMillis = limitMillis;
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kvselect-handshake-reaper");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts the reaper for {@code hz}'s member connections with the limit of {@value #LIMIT_PROPERTY}
   * (default {@value #DEFAULT_LIMIT_MS} ms). Empty when it is turned off or {@code hz} is not a
   * member this code can look into (then it logs why once).
   */
  public static Optional<StalledHandshakeReaper> start(HazelcastInstance hz) {
    long limit = Long.getLong(LIMIT_PROPERTY, DEFAULT_LIMIT_MS);
    if (limit <= 0) {
      LOG.info(
          "cluster: unanswered member connections are not closed (-D{}={})", LIMIT_PROPERTY, limit);
      return Optional.empty();
    }
    return start(hz, limit);
  }

  /** Starts the reaper for {@code hz} with {@code limitMillis}; empty when {@code hz} cannot be looked into. */
  public static Optional<StalledHandshakeReaper> start(HazelcastInstance hz, long limitMillis) {
    ServerConnectionManager manager;
    try {
      HazelcastInstanceImpl impl =
          hz instanceof HazelcastInstanceProxy p ? p.getOriginal() : (HazelcastInstanceImpl) hz;
      manager = impl.node.getServer().getConnectionManager(EndpointQualifier.MEMBER);
    } catch (RuntimeException e) {
      LOG.warn(
          "cluster: unanswered member connections are not closed: cannot reach the member's connections ({})",
          e.toString());
      return Optional.empty();
    }
    StalledHandshakeReaper reaper =
        new StalledHandshakeReaper(manager::getConnections, limitMillis);
    hz.getLifecycleService()
        .addLifecycleListener(
            e -> {
              if (e.getState() == LifecycleEvent.LifecycleState.SHUTTING_DOWN) {
                reaper.stop();
              }
            });
    reaper.scheduler.scheduleWithFixedDelay(
        reaper::scanSafely, SCAN_MS, SCAN_MS, TimeUnit.MILLISECONDS);
    return Optional.of(reaper);
  }

  private void scanSafely() {
    try {
      scan(System.nanoTime());
    } catch (RuntimeException e) {
      LOG.debug("cluster: handshake reaper scan failed: {}", e.toString());
    }
  }

  /** One look at the connections at {@code nowNanos}; closes those unanswered for the limit. */
  void scan(long nowNanos) {
    Set<Integer> present = new HashSet<>();
    for (ServerConnection sc : connections.get()) {
      if (!(sc instanceof TcpServerConnection c)) {
        continue;
      }
      Channel ch = c.getChannel();
      if (!c.isAlive() || ch == null || !ch.isClientMode() || ch.bytesRead() > 0) {
        continue;
      }
      int id = c.getConnectionId();
      present.add(id);
      long since = firstSeen.computeIfAbsent(id, k -> nowNanos);
      long waited = TimeUnit.NANOSECONDS.toMillis(nowNanos - since);
      if (waited >= limitMillis) {
        closed.incrementAndGet();
        LOG.info(
            "cluster: closing the member connection to {}: the member has sent nothing for {} ms since"
                + " this node connected (paused or hung); Hazelcast connects again when it needs it",
            c.getRemoteAddress(),
            waited);
        c.close(
            "the member sent nothing for " + waited + " ms after the connect (paused or hung?)",
            null);
        present.remove(id);
      }
    }
    firstSeen.keySet().retainAll(present);
  }

  /** The limit, in milliseconds. */
  public long limitMillis() {
    return limitMillis;
  }

  /** Connections closed so far. */
  public long closed() {
    return closed.get();
  }

  /** Stops the scans; connections are left as they are. */
  public void stop() {
    scheduler.shutdownNow();
  }
}
