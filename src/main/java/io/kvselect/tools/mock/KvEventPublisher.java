package io.kvselect.tools.mock;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLongArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The ZMQ side of one mock engine, as vLLM's {@code ZmqEventPublisher}: a PUB socket per DP rank
 * sending {@code [topic][seq 8B big-endian][payload]} (seq from 0 per rank, +1 per batch), a ring of
 * the last {@link #BUFFER_STEPS} payloads per rank, and optionally a ROUTER that replays rank 0's
 * ring (vLLM offers replay with one DP rank only).
 *
 * <p>Every socket is created, used and closed by the {@link PublisherThread} that hosts the
 * publisher: its own (the first constructor) or one shared with other publishers (the second);
 * other threads only enqueue commands ({@link #publish}, {@link #restart}, {@link #close}). Replay
 * requests are served when that thread's poll finds the ROUTER readable (see
 * {@link PublisherThread} for how promptly). A replay request is exactly
 * {@code [identity][""][start_seq 8B]}; anything else is ignored, as vLLM does. Answers follow the
 * configured {@link ReplayLayout}.
 *
 * <p>The rings, sequence counters and sockets belong to the hosting thread; {@link #lastSeq} is
 * the only state other threads read.
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

  private final String host;
  private final int[] pubPorts;
  private final Integer replayPort;
  private final byte[] topic;
  private final ReplayLayout layout;
  private final PublisherThread owner;
  private final boolean ownsThread;
  private final CompletableFuture<Endpoints> ready = new CompletableFuture<>();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private final AtomicLongArray lastSeq;
  // owned by the hosting thread
  private ZMQ.Socket[] pubs;
  private ZMQ.Socket router;
  private final long[] next;
  private final Ring[] rings;
  private boolean open;

  /**
   * Starts its own socket thread named {@code threadName}; {@link #ready()} completes once every
   * socket is bound.
   *
   * @param pubPorts one PUB port per rank (0 = ephemeral)
   * @param replayPort the ROUTER port (0 = ephemeral), or null for no replay
   */
  public KvEventPublisher(
      String threadName,
      String host,
      int[] pubPorts,
      Integer replayPort,
      String topic,
      ReplayLayout layout) {
    this(new PublisherThread(threadName, 1), true, host, pubPorts, replayPort, topic, layout);
  }

  /**
   * Hosts the sockets on {@code thread}, shared with other publishers; the caller closes the thread
   * after closing every publisher on it.
   */
  public KvEventPublisher(
      PublisherThread thread,
      String host,
      int[] pubPorts,
      Integer replayPort,
      String topic,
      ReplayLayout layout) {
    this(thread, false, host, pubPorts, replayPort, topic, layout);
  }

  private KvEventPublisher(
      PublisherThread thread,
      boolean ownsThread,
      String host,
      int[] pubPorts,
      Integer replayPort,
      String topic,
      ReplayLayout layout) {
    this.host = host;
    this.pubPorts = pubPorts.clone();
    this.replayPort = replayPort;
    this.topic = topic.getBytes(StandardCharsets.UTF_8);
    this.layout = layout;
    this.owner = thread;
    this.ownsThread = ownsThread;
    this.lastSeq = new AtomicLongArray(pubPorts.length);
    this.next = new long[pubPorts.length];
    this.rings = new Ring[pubPorts.length];
    for (int r = 0; r < pubPorts.length; r++) {
      lastSeq.set(r, -1);
      rings[r] = new Ring();
    }
    owner.execute(t -> open());
  }

  /** Completes with the bound endpoints, or fails when a bind failed (the sockets are then closed). */
  public CompletableFuture<Endpoints> ready() {
    return ready;
  }

  /** Queues one batch for {@code rank}; it gets the rank's next sequence number. */
  public void publish(int rank, byte[] payload) {
    owner.execute(t -> send(rank, payload));
  }

  /** Queues a restart: sequence numbers start again at 0 and the replay rings are emptied. */
  public void restart() {
    owner.execute(
        t -> {
          for (int r = 0; r < next.length; r++) {
            next[r] = 0;
            rings[r].clear();
            lastSeq.set(r, -1);
          }
        });
  }

  /**
   * Queues a stall: the hosting thread sends nothing for {@code d} (batches published meanwhile
   * wait in its queue), like an engine whose publisher thread is descheduled. For lag measurements.
   */
  public void stall(Duration d) {
    owner.pauseUntil(new java.util.concurrent.CountDownLatch(1), d.toNanos());
  }

  /**
   * As {@link #stall(Duration)}, ending when {@code released} counts down (or after {@code max}).
   * The hosting thread is shared: every publisher on it stalls.
   */
  public void stallUntil(java.util.concurrent.CountDownLatch released, Duration max) {
    owner.pauseUntil(released, max.toNanos());
  }

  /** The sequence number of the last batch published on {@code rank}, or -1 when none yet. */
  public long lastSeq(int rank) {
    return lastSeq.get(rank);
  }

  /** Closes every socket (after the commands already queued), and the own thread if any; waits up to 5 s. */
  @Override
  public void close() {
    owner.execute(t -> closeSockets());
    try {
      closed.get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.warn("{}: sockets not closed within 5 s: {}", owner.name(), e.toString());
    }
    if (ownsThread) {
      owner.close();
    }
  }

  /** Hosting thread: the replay ROUTER (null without replay). */
  ZMQ.Socket router() {
    return router;
  }

  private void open() {
    try {
      pubs = new ZMQ.Socket[pubPorts.length];
      List<String> endpoints = new ArrayList<>();
      for (int r = 0; r < pubs.length; r++) {
        pubs[r] = owner.context().createSocket(SocketType.PUB);
        pubs[r].setSndHWM(HWM);
        pubs[r].setHandshakeIvl(io.kvselect.server.events.KvEventIngestOptions.HANDSHAKE_IVL_MS);
        endpoints.add(bind(pubs[r], pubPorts[r]));
      }
      String replay = null;
      if (replayPort != null) {
        router = owner.context().createSocket(SocketType.ROUTER);
        router.setSndHWM(HWM);
        router.setHandshakeIvl(io.kvselect.server.events.KvEventIngestOptions.HANDSHAKE_IVL_MS);
        replay = bind(router, replayPort);
        owner.watch(this);
      }
      open = true;
      ready.complete(new Endpoints(Collections.unmodifiableList(endpoints), replay));
    } catch (RuntimeException e) {
      closeSockets();
      ready.completeExceptionally(e);
    }
  }

  private String bind(ZMQ.Socket s, int port) {
    s.bind("tcp://" + host + ":" + (port == 0 ? "*" : Integer.toString(port)));
    return s.getLastEndpoint();
  }

  private void send(int rank, byte[] payload) {
    if (!open) {
      return;
    }
    long seq = next[rank]++;
    ZMQ.Socket s = pubs[rank];
    s.sendMore(topic);
    s.sendMore(seqBytes(seq));
    s.send(payload);
    rings[rank].add(seq, payload);
    lastSeq.set(rank, seq);
  }

  private void closeSockets() {
    open = false;
    if (router != null) {
      owner.unwatch(this);
      owner.context().destroySocket(router);
      router = null;
    }
    if (pubs != null) {
      for (ZMQ.Socket s : pubs) {
        if (s != null) {
          owner.context().destroySocket(s);
        }
      }
      pubs = null;
    }
    closed.complete(null);
  }

  /** Hosting thread: answers every pending replay request from rank 0's ring. */
  void serveReplays() {
    if (router == null) {
      return;
    }
    Ring ring = rings[0];
    for (ZMsg msg = ZMsg.recvMsg(router, ZMQ.DONTWAIT);
        msg != null;
        msg = ZMsg.recvMsg(router, ZMQ.DONTWAIT)) {
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
      long start = 0;
      for (int i = 0; i < 8; i++) {
        start = (start << 8) | (f[2][i] & 0xFF);
      }
      for (int i = 0; i < ring.size; i++) {
        long seq = ring.seq(i);
        if (Long.compareUnsigned(seq, start) >= 0) {
          router.sendMore(id);
          router.sendMore(EMPTY);
          if (layout == ReplayLayout.TOPIC) {
            router.sendMore(topic);
          }
          router.sendMore(seqBytes(seq));
          router.send(ring.payload(i));
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
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) seq;
      seq >>>= 8;
    }
    return b;
  }

  /** The last {@link #BUFFER_STEPS} batches of one rank, oldest first. Hosting thread only. */
  private static final class Ring {
    private final long[] seqs = new long[BUFFER_STEPS];
    private final byte[][] payloads = new byte[BUFFER_STEPS][];
    private int head;
    private int size;

    void add(long seq, byte[] payload) {
      int slot = (head + size) % BUFFER_STEPS;
      if (size == BUFFER_STEPS) {
        head = (head + 1) % BUFFER_STEPS;
      } else {
        size++;
      }
      seqs[slot] = seq;
      payloads[slot] = payload;
    }

    long seq(int i) {
      return seqs[(head + i) % BUFFER_STEPS];
    }

    byte[] payload(int i) {
      return payloads[(head + i) % BUFFER_STEPS];
    }

    void clear() {
      java.util.Arrays.fill(payloads, null);
      head = 0;
      size = 0;
    }
  }
}
