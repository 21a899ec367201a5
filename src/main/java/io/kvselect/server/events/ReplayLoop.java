package io.kvselect.server.events;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * The {@code kvselect-zmq-replay} thread: runs replay requests against the engines' ROUTER
 * endpoints, several at once, each over its own DEALER socket multiplexed on one JeroMQ poller.
 * A replay never blocks live traffic: the poller threads only submit requests and receive the
 * outcome through the {@code done} callback, which is called on this thread and must only post.
 *
 * <p>Protocol (kv_events_wire.md §1.6): send {@code ["", start seq 8 B BE]}; each reply is, after
 * the empty delimiter, {@code [topic][seq][payload]} (vLLM &gt;= 0.26) or {@code [seq][payload]}
 * (older vLLM, SGLang). Reading stops at the end marker (seq {@code ff x 8} or an empty payload),
 * once {@code to - 1} arrived, on a malformed reply, or at the timeout. Sockets are created, used
 * and closed on this thread only.
 */
final class ReplayLoop implements Runnable {

  /** One replay of {@code [from, to)}; {@code done} gets the outcome (not called after stop). */
  record Request(String endpoint, long from, long to, Consumer<ReplayOutcome> done) {}

  private static final Logger LOG = LoggerFactory.getLogger(ReplayLoop.class);
  private static final long END_SEQ = -1L;

  private static final class Active {
    final Request request;
    final ZMQ.Socket socket;
    final long deadlineNanos;
    final List<Batch> received = new ArrayList<>();

    Active(Request request, ZMQ.Socket socket, long deadlineNanos) {
      this.request = request;
      this.socket = socket;
      this.deadlineNanos = deadlineNanos;
    }
  }

  private final ZMQ.Context context;
  private final KvEventIngestOptions options;
  private final Queue<Request> incoming = new ConcurrentLinkedQueue<>();
  private final Wakeup wakeup = new Wakeup();
  private final Thread thread;
  private volatile boolean running = true;
  // owned by the replay thread
  private final ArrayDeque<Request> waiting = new ArrayDeque<>();
  private final List<Active> active = new ArrayList<>();

  ReplayLoop(ZMQ.Context context, KvEventIngestOptions options) {
    this.context = context;
    this.options = options;
    this.thread = new Thread(this, "kvselect-zmq-replay");
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Any thread. */
  void submit(Request request) {
    incoming.add(request);
    wakeup.signal();
  }

  /** Any thread: stop, closing every DEALER; waits up to {@code millis} for the thread to end. */
  boolean stop(long millis) throws InterruptedException {
    running = false;
    wakeup.signal();
    thread.join(millis);
    return !thread.isAlive();
  }

  @Override
  public void run() {
    try (ZMQ.Poller poller = context.poller(options.maxConcurrentReplays() + 1)) {
      poller.register(wakeup.channel(), ZMQ.Poller.POLLIN);
      while (running) {
        for (Request r; (r = incoming.poll()) != null; ) {
          waiting.add(r);
        }
        while (active.size() < options.maxConcurrentReplays() && !waiting.isEmpty()) {
          begin(poller, waiting.poll());
        }
        poller.poll(pollTimeoutMillis());
        wakeup.clear();
        for (Active a : List.copyOf(active)) {
          read(poller, a);
        }
        long now = System.nanoTime();
        for (Active a : List.copyOf(active)) {
          if (now - a.deadlineNanos >= 0) {
            finish(poller, a, "timeout after " + options.replayTimeout().toMillis() + " ms");
          }
        }
      }
      for (Active a : List.copyOf(active)) {
        poller.unregister(a.socket);
        a.socket.close();
      }
      active.clear();
    } catch (RuntimeException e) {
      LOG.error("replay thread failed", e);
    } finally {
      wakeup.close();
    }
  }

  private long pollTimeoutMillis() {
    long next = Long.MAX_VALUE;
    long now = System.nanoTime();
    for (Active a : active) {
      next = Math.min(next, Math.max(0, a.deadlineNanos - now));
    }
    return next == Long.MAX_VALUE ? 1_000 : Math.max(1, (next + 999_999) / 1_000_000);
  }

  private void begin(ZMQ.Poller poller, Request r) {
    ZMQ.Socket socket = context.socket(SocketType.DEALER);
    socket.setLinger(0);
    socket.setRcvHWM(options.rcvHwm());
    socket.setReconnectIVL(KvEventIngestOptions.RECONNECT_IVL_MS);
    socket.setReconnectIVLMax(KvEventIngestOptions.RECONNECT_IVL_MAX_MS);
    socket.setHandshakeIvl(KvEventIngestOptions.HANDSHAKE_IVL_MS);
    socket.setIPv6(r.endpoint().startsWith("tcp://["));
    Active a = new Active(r, socket, System.nanoTime() + options.replayTimeout().toNanos());
    active.add(a);
    poller.register(socket, ZMQ.Poller.POLLIN);
    try {
      socket.connect(r.endpoint());
      boolean sent =
          socket.sendMore(new byte[0])
              && socket.send(ByteBuffer.allocate(8).putLong(r.from()).array(), ZMQ.DONTWAIT);
      if (!sent) {
        finish(poller, a, "request could not be sent");
      }
    } catch (RuntimeException e) {
      finish(poller, a, "replay endpoint " + r.endpoint() + " failed: " + e.getMessage());
    }
  }

  private void read(ZMQ.Poller poller, Active a) {
    Request r = a.request;
    while (true) {
      byte[] first = a.socket.recv(ZMQ.DONTWAIT);
      if (first == null) {
        return;
      }
      List<byte[]> frames = new ArrayList<>(4);
      frames.add(first);
      while (a.socket.hasReceiveMore()) {
        frames.add(a.socket.recv(0));
      }
      int n = frames.size();
      boolean shaped =
          frames.get(0).length == 0 && (n == 3 || n == 4) && frames.get(n - 2).length == 8;
      if (!shaped) {
        finish(poller, a, "malformed reply of " + n + " frames");
        return;
      }
      long seq = ByteBuffer.wrap(frames.get(n - 2)).getLong();
      byte[] payload = frames.get(n - 1);
      if (seq == END_SEQ || payload.length == 0) {
        finish(poller, a, null);
        return;
      }
      if (seq >= r.from() && seq < r.to()) {
        a.received.add(new Batch(seq, payload));
      }
      if (seq >= r.to() - 1) {
        finish(poller, a, null);
        return;
      }
    }
  }

  private void finish(ZMQ.Poller poller, Active a, String stopCause) {
    active.remove(a);
    poller.unregister(a.socket);
    a.socket.close();
    Request r = a.request;
    ReplayOutcome outcome = ReplayOutcome.evaluate(r.from(), r.to(), a.received, stopCause);
    if (!outcome.complete()) {
      LOG.warn("replay from {} incomplete: {}", r.endpoint(), outcome.reason());
    }
    try {
      r.done().accept(outcome);
    } catch (RuntimeException e) {
      LOG.error("replay callback failed", e);
    }
  }
}
