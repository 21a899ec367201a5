package io.kvselect.tools.mock;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The ZMQ side of one mock engine, as vLLM's {@code ZmqEventPublisher}: a PUB socket per DP rank
 * sending {@code [topic][seq 8B big-endian][payload]} (seq from 0 per rank, +1 per batch), a ring of
 * the last {@link #BUFFER_STEPS} payloads per rank, and optionally a ROUTER that replays rank 0's
 * ring (vLLM offers replay with one DP rank only).
 *
 * <p>Every socket is created, used and closed by one named thread; other threads only enqueue
 * commands ({@link #publish}, {@link #restart}, {@link #close}). Replay requests are served between
 * publishes, polling the ROUTER every millisecond. A replay request is exactly
 * {@code [identity][""][start_seq 8B]}; anything else is ignored, as vLLM does. Answers follow the
 * configured {@link ReplayLayout}.
 */
public final class KvEventPublisher implements AutoCloseable {

  /** Batches kept per rank for replay (vLLM's {@code buffer_steps}). */
  public static final int BUFFER_STEPS = 10_000;
  /** Send high-water mark of every socket (vLLM's {@code hwm}). */
  static final int HWM = 100_000;

  private static final Logger LOG = LoggerFactory.getLogger(KvEventPublisher.class);
  private static final byte[] EMPTY = new byte[0];
  private static final byte[] END_SEQ = {-1, -1, -1, -1, -1, -1, -1, -1};

  /** Where the sockets are bound, as {@code tcp://host:port}; {@code replay} is null without replay. */
  public record Endpoints(List<String> publishers, String replay) {}

  private sealed interface Command permits Publish, Restart, Stop {}

  private record Publish(int rank, byte[] payload) implements Command {}

  private record Restart() implements Command {}

  private record Stop() implements Command {}

  private record Entry(long seq, byte[] payload) {}

  private final String host;
  private final int[] pubPorts;
  private final Integer replayPort;
  private final byte[] topic;
  private final ReplayLayout layout;
  private final LinkedBlockingQueue<Command> queue = new LinkedBlockingQueue<>();
  private final CompletableFuture<Endpoints> ready = new CompletableFuture<>();
  private final AtomicLongArray lastSeq;
  private final Thread thread;

  /**
   * Starts the socket thread; {@link #ready()} completes once every socket is bound.
   *
   * @param pubPorts one PUB port per rank (0 = ephemeral)
   * @param replayPort the ROUTER port (0 = ephemeral), or null for no replay
   */
  public KvEventPublisher(String threadName, String host, int[] pubPorts, Integer replayPort, String topic,
      ReplayLayout layout) {
    this.host = host;
    this.pubPorts = pubPorts.clone();
    this.replayPort = replayPort;
    this.topic = topic.getBytes(StandardCharsets.UTF_8);
    this.layout = layout;
    this.lastSeq = new AtomicLongArray(pubPorts.length);
    for (int r = 0; r < pubPorts.length; r++) {
      lastSeq.set(r, -1);
    }
    this.thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
    thread.start();
  }

  /** Completes with the bound endpoints, or fails when a bind failed (the thread has then ended). */
  public CompletableFuture<Endpoints> ready() {
    return ready;
  }

  /** Queues one batch for {@code rank}; it gets the rank's next sequence number. */
  public void publish(int rank, byte[] payload) {
    queue.add(new Publish(rank, payload));
  }

  /** Queues a restart: sequence numbers start again at 0 and the replay rings are emptied. */
  public void restart() {
    queue.add(new Restart());
  }

  /** The sequence number of the last batch published on {@code rank}, or -1 when none yet. */
  public long lastSeq(int rank) {
    return lastSeq.get(rank);
  }

  /** Stops the thread, closing every socket; waits up to 5 seconds. */
  @Override
  public void close() {
    queue.add(new Stop());
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      LOG.warn("{} did not stop within 5 s", thread.getName());
    }
  }

  private void run() {
    try (ZContext ctx = new ZContext()) {
      ctx.setLinger(100);
      ZMQ.Socket[] pubs = new ZMQ.Socket[pubPorts.length];
      List<String> endpoints = new ArrayList<>();
      for (int r = 0; r < pubs.length; r++) {
        pubs[r] = ctx.createSocket(SocketType.PUB);
        pubs[r].setSndHWM(HWM);
        endpoints.add(bind(pubs[r], pubPorts[r]));
      }
      ZMQ.Socket router = null;
      String replay = null;
      if (replayPort != null) {
        router = ctx.createSocket(SocketType.ROUTER);
        router.setSndHWM(HWM);
        replay = bind(router, replayPort);
      }
      ready.complete(new Endpoints(Collections.unmodifiableList(endpoints), replay));
      loop(ctx, pubs, router);
    } catch (Throwable t) {
      if (!ready.completeExceptionally(t)) {
        LOG.error("{} failed", Thread.currentThread().getName(), t);
      }
    }
  }

  private String bind(ZMQ.Socket s, int port) {
    s.bind("tcp://" + host + ":" + (port == 0 ? "*" : Integer.toString(port)));
    return s.getLastEndpoint();
  }

  private void loop(ZContext ctx, ZMQ.Socket[] pubs, ZMQ.Socket router) throws InterruptedException {
    List<ArrayDeque<Entry>> rings = new ArrayList<>();
    for (int r = 0; r < pubs.length; r++) {
      rings.add(new ArrayDeque<>());
    }
    long[] next = new long[pubs.length];
    ZMQ.Poller poller = null;
    if (router != null) {
      poller = ctx.createPoller(1);
      poller.register(router, ZMQ.Poller.POLLIN);
    }
    try {
      while (true) {
        Command c;
        if (poller != null) {
          poller.poll(1);
          if (poller.pollin(0)) {
            serveReplays(router, rings.get(0));
          }
          c = queue.poll();
        } else {
          c = queue.poll(10, TimeUnit.MILLISECONDS);
        }
        for (; c != null; c = queue.poll()) {
          if (c instanceof Stop) {
            return;
          } else if (c instanceof Restart) {
            for (int r = 0; r < pubs.length; r++) {
              next[r] = 0;
              rings.get(r).clear();
              lastSeq.set(r, -1);
            }
          } else if (c instanceof Publish p) {
            long seq = next[p.rank()]++;
            ZMQ.Socket s = pubs[p.rank()];
            s.sendMore(topic);
            s.sendMore(seqBytes(seq));
            s.send(p.payload());
            ArrayDeque<Entry> ring = rings.get(p.rank());
            ring.addLast(new Entry(seq, p.payload()));
            if (ring.size() > BUFFER_STEPS) {
              ring.removeFirst();
            }
            lastSeq.set(p.rank(), seq);
          }
        }
      }
    } finally {
      if (poller != null) {
        poller.close();
      }
    }
  }

  private void serveReplays(ZMQ.Socket router, ArrayDeque<Entry> ring) {
    for (ZMsg msg = ZMsg.recvMsg(router, ZMQ.DONTWAIT); msg != null; msg = ZMsg.recvMsg(router, ZMQ.DONTWAIT)) {
      byte[][] f = new byte[msg.size()][];
      for (int i = 0; i < f.length; i++) {
        byte[] d = msg.pop().getData();
        f[i] = d == null ? EMPTY : d;
      }
      msg.destroy();
      if (f.length != 3 || f[1].length != 0 || f[2].length != 8) {
        LOG.warn("ignoring a replay request of {} frames", f.length);
        continue;
      }
      byte[] id = f[0];
      long start = ByteBuffer.wrap(f[2]).getLong();
      for (Entry e : ring) {
        if (Long.compareUnsigned(e.seq(), start) >= 0) {
          router.sendMore(id);
          router.sendMore(EMPTY);
          if (layout == ReplayLayout.TOPIC) {
            router.sendMore(topic);
          }
          router.sendMore(seqBytes(e.seq()));
          router.send(e.payload());
        }
      }
      router.sendMore(id);
      router.sendMore(EMPTY);
      if (layout == ReplayLayout.TOPIC) {
        router.sendMore(EMPTY);
      }
      router.sendMore(END_SEQ);
      router.send(EMPTY);
    }
  }

  static byte[] seqBytes(long seq) {
    return ByteBuffer.allocate(8).putLong(seq).array();
  }
}
