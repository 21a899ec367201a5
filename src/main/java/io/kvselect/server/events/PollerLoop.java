package io.kvselect.server.events;

import io.kvselect.core.catalog.EndpointSyntax;
import io.kvselect.core.index.WorkerRank;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * One {@code kvselect-zmq-<i>} thread multiplexing the SUB sockets of many ranks on one JeroMQ
 * poller. Other threads talk to it only through {@link #post} (a command queue plus a pipe
 * wakeup registered with the poller), so every socket is created, read and closed on this
 * thread, and commands run in the order they were posted, between batches. Batches are handed to
 * each subscription's sink from here.
 *
 * <p>Connecting: a {@code tcp://} host is resolved first; a host that does not resolve, or a
 * {@code connect} that throws, leaves the rank's session without a socket and retries it from
 * this loop after a delay doubling from {@code retryInitial} to {@code retryMax}. Nothing of it
 * reaches the caller of {@code subscribe}.
 *
 * <p>Fairness: each readable socket is read for at most {@value #READ_BUDGET} messages per round;
 * a socket with more is revisited in the next round, which then does not wait in poll.
 */
final class PollerLoop implements Runnable {

  private static final Logger LOG = LoggerFactory.getLogger(PollerLoop.class);
  private static final int READ_BUDGET = 256;
  private static final long IDLE_POLL_MS = 1_000;

  /** Written by this thread, read by {@code stats()} from any thread. */
  final Map<WorkerRank, RankSession> sessions = new ConcurrentHashMap<>();

  private final ZMQ.Context context;
  private final KvEventIngestOptions options;
  private final ReplayLoop replays;
  private final Clock clock;
  private final Thread thread;
  private final Queue<Runnable> commands = new ConcurrentLinkedQueue<>();
  private final Wakeup wakeup = new Wakeup();
  private volatile boolean running = true;
  private boolean accepting = true; // guarded by commands
  // owned by this thread
  private final Map<ZMQ.Socket, RankSession> bySocket = new IdentityHashMap<>();
  private final Set<RankSession> hot = new LinkedHashSet<>();
  private final Set<RankSession> waiting = new LinkedHashSet<>();
  private ZMQ.Poller poller;

  /** This loop's number ({@code kvselect-zmq-<index>}). */
  private final int index;

  /** Called on this thread with {@link #index} after every round (the shards' hand-off sends the round's writes). */
  private final java.util.function.IntConsumer afterRound;

  PollerLoop(
      int index,
      ZMQ.Context context,
      KvEventIngestOptions options,
      ReplayLoop replays,
      Clock clock,
      java.util.function.IntConsumer afterRound) {
    this.index = index;
    this.afterRound = afterRound;
    this.context = context;
    this.options = options;
    this.replays = replays;
    this.clock = clock;
    this.thread = new Thread(this, "kvselect-zmq-" + index);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  boolean isOwnThread() {
    return Thread.currentThread() == thread;
  }

  /** Any thread: runs {@code command} on this loop; false once the loop has stopped. */
  boolean post(Runnable command) {
    synchronized (commands) {
      if (!accepting) {
        return false;
      }
      commands.add(command);
    }
    wakeup.signal();
    return true;
  }

  /** Any thread: opens (or keeps, when unchanged) the rank's subscription delivering to {@code sink}. */
  void subscribe(WorkerRank rank, String endpoint, String replayEndpoint, BatchSink sink) {
    post(() -> open(rank, endpoint, replayEndpoint, sink));
  }

  /**
   * Any thread: closes the rank's socket on this loop, then runs {@code afterClose} (nullable)
   * there; the future completes after both. Once the loop has stopped, {@code afterClose} runs on
   * the caller (every socket is closed and nothing is delivered any more).
   */
  CompletableFuture<Void> unsubscribe(WorkerRank rank, Runnable afterClose) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    boolean posted =
        post(
            () -> {
              try {
                RankSession s = sessions.get(rank);
                if (s != null && !s.isClosed()) {
                  sessions.remove(rank);
                  closeSession(s);
                }
                if (afterClose != null) {
                  afterClose.run();
                }
              } finally {
                done.complete(null);
              }
            });
    if (!posted) {
      try {
        if (afterClose != null) {
          afterClose.run();
        }
      } finally {
        done.complete(null);
      }
    }
    return done;
  }

  /** Called by a session on this thread; the outcome comes back through the command queue. */
  void requestReplay(RankSession session, long from, long to) {
    replays.submit(
        new ReplayLoop.Request(
            session.replayEndpoint,
            from,
            to,
            outcome -> post(() -> session.onReplayDone(outcome))));
  }

  /** Any thread: stop and wait up to {@code millis}; true if the thread has ended. */
  boolean stop(long millis) throws InterruptedException {
    running = false;
    wakeup.signal();
    thread.join(millis);
    return !thread.isAlive();
  }

  @Override
  public void run() {
    poller = context.poller(64);
    try {
      poller.register(wakeup.channel(), ZMQ.Poller.POLLIN);
      while (running) {
        poller.poll(hot.isEmpty() ? pollTimeoutMillis() : 0);
        wakeup.clear();
        runCommands();
        retryDue();
        for (int i = 0; i < poller.getSize(); i++) {
          ZMQ.PollItem item = poller.getItem(i);
          RankSession s =
              item == null || item.getSocket() == null ? null : bySocket.get(item.getSocket());
          if (s != null && item.isReadable()) {
            readSafely(s);
          }
        }
        for (RankSession s : List.copyOf(hot)) {
          readSafely(s);
        }
        afterRound.accept(index);
      }
    } catch (RuntimeException e) {
      LOG.error("{} failed", thread.getName(), e);
    } finally {
      running = false;
      for (RankSession s : List.copyOf(sessions.values())) {
        closeSession(s);
      }
      synchronized (commands) {
        accepting = false;
      }
      runCommands(); // completes unsubscribe futures; opens nothing (running is false)
      afterRound.accept(index);
      poller.close();
      wakeup.close();
    }
  }

  private void runCommands() {
    for (Runnable c; (c = commands.poll()) != null; ) {
      try {
        c.run();
      } catch (RuntimeException e) {
        LOG.error("{}: command failed", thread.getName(), e);
      }
    }
  }

  private void readSafely(RankSession s) {
    try {
      read(s);
    } catch (RuntimeException e) {
      LOG.error("rank {}: read failed", s.rank, e);
      hot.remove(s);
    }
  }

  private void read(RankSession s) {
    if (s.isClosed()) {
      hot.remove(s);
      return;
    }
    ZMQ.Socket socket = s.socket();
    for (int k = 0; k < READ_BUDGET; k++) {
      byte[] topic = socket.recv(ZMQ.DONTWAIT);
      if (topic == null) {
        hot.remove(s);
        return;
      }
      int frames = 1;
      byte[] seq = null;
      byte[] payload = null;
      while (socket.hasReceiveMore()) {
        byte[] f = socket.recv(0);
        frames++;
        if (frames == 2) {
          seq = f;
        } else if (frames == 3) {
          payload = f;
        }
      }
      s.onMessage(frames, seq, payload);
    }
    hot.add(s);
  }

  private long pollTimeoutMillis() {
    long timeout = IDLE_POLL_MS;
    long now = System.nanoTime();
    for (RankSession s : waiting) {
      timeout = Math.min(timeout, Math.max(1, (s.nextAttemptNanos() - now + 999_999) / 1_000_000));
    }
    return timeout;
  }

  private void retryDue() {
    if (waiting.isEmpty()) {
      return;
    }
    long now = System.nanoTime();
    for (RankSession s : List.copyOf(waiting)) {
      if (now - s.nextAttemptNanos() >= 0) {
        waiting.remove(s);
        connect(s);
      }
    }
  }

  private void open(WorkerRank rank, String endpoint, String replayEndpoint, BatchSink sink) {
    if (!running) {
      return;
    }
    RankSession old = sessions.get(rank);
    if (old != null) {
      if (old.endpoint.equals(endpoint)
          && Objects.equals(old.replayEndpoint, replayEndpoint)
          && old.sink == sink) {
        return; // unchanged: keep the socket, the cursor and the indexed blocks
      }
      closeSession(old);
    }
    RankSession s = new RankSession(rank, endpoint, replayEndpoint, sink, this, clock, options);
    sessions.put(rank, s);
    connect(s);
  }

  /** Resolves the host, creates and connects the socket; on failure schedules a retry. */
  private void connect(RankSession s) {
    String host = EndpointSyntax.tcpHost(s.endpoint);
    String error = null;
    if (host != null) {
      try {
        options.resolver().resolve(host);
      } catch (UnknownHostException | RuntimeException e) {
        error = "cannot resolve host " + host + ": " + e.getMessage();
      }
    }
    if (error == null) {
      ZMQ.Socket socket = newSocket(s);
      try {
        socket.connect(s.endpoint);
        s.attach(socket);
        bySocket.put(socket, s);
        poller.register(socket, ZMQ.Poller.POLLIN);
        LOG.debug(
            "rank {}: subscribed to {} (replay {}) on {}",
            s.rank,
            s.endpoint,
            s.replayEndpoint,
            thread.getName());
        return;
      } catch (RuntimeException e) {
        socket.close();
        error = "cannot connect to " + s.endpoint + ": " + e.getMessage();
      }
    }
    boolean first = s.stats().retries() == 0;
    s.connectFailed(error, System.nanoTime());
    waiting.add(s);
    if (first) {
      LOG.warn("rank {}: {}; retrying with backoff", s.rank, error);
    } else {
      LOG.debug("rank {}: {}", s.rank, error);
    }
  }

  private ZMQ.Socket newSocket(RankSession s) {
    ZMQ.Socket socket = context.socket(SocketType.SUB);
    socket.setLinger(0);
    socket.setReconnectIVL(KvEventIngestOptions.RECONNECT_IVL_MS);
    socket.setReconnectIVLMax(KvEventIngestOptions.RECONNECT_IVL_MAX_MS);
    socket.setHandshakeIvl(KvEventIngestOptions.HANDSHAKE_IVL_MS);
    socket.setTCPKeepAlive(1);
    socket.setHeartbeatIvl(KvEventIngestOptions.HEARTBEAT_IVL_MS);
    socket.setHeartbeatTimeout(KvEventIngestOptions.HEARTBEAT_TIMEOUT_MS);
    socket.setHeartbeatTtl(KvEventIngestOptions.HEARTBEAT_TIMEOUT_MS);
    socket.setRcvHWM(options.rcvHwm());
    socket.setIPv6(s.endpoint.startsWith("tcp://["));
    socket.setEventHook(
        s::onLinkEvent, ZMQ.EVENT_CONNECTED | ZMQ.EVENT_CONNECT_RETRIED | ZMQ.EVENT_DISCONNECTED);
    socket.subscribe(new byte[0]);
    return socket;
  }

  private void closeSession(RankSession s) {
    ZMQ.Socket socket = s.socket();
    if (socket != null) {
      bySocket.remove(socket);
      poller.unregister(socket);
    }
    hot.remove(s);
    waiting.remove(s);
    s.close();
  }
}
