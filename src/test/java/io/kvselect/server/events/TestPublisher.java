package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * A JeroMQ stand-in for an engine's publisher: an XPUB (wire-compatible with PUB; it also tells
 * the test when a subscriber has joined, which avoids the slow-joiner race without sleeping) and,
 * optionally, a ROUTER replay server on its own thread, answering like vLLM &gt;= 0.26
 * ({@link Layout#WITH_TOPIC}: {@code [id]["" ][topic][seq][payload]}) or like older vLLM / SGLang
 * ({@link Layout#NO_TOPIC}: {@code [id][""][seq][payload]}). The XPUB is used by the test thread
 * only. Payloads are {@code "<name>-<seq>"}.
 */
final class TestPublisher implements AutoCloseable {

  enum Layout {
    WITH_TOPIC,
    NO_TOPIC
  }

  static final byte[] TOPIC = "kv-events".getBytes(StandardCharsets.UTF_8);

  private final String name;
  private final ZMQ.Context context = ZMQ.context(1);
  private final ZMQ.Socket pub;
  private final int pubPort;
  private final Map<Long, byte[]> buffer = new ConcurrentSkipListMap<>();
  private final Thread replayThread;
  private final int replayPort;
  private volatile boolean running = true;
  private volatile long replyDelayMs;

  /** A publisher without a replay endpoint. */
  TestPublisher(String name) {
    this(name, null);
  }

  /** A publisher with a replay server in {@code layout}, or none when null. */
  TestPublisher(String name, Layout layout) {
    this.name = name;
    pub = context.socket(SocketType.XPUB);
    pub.setLinger(0);
    pub.setXpubVerbose(true);
    pub.setSndHWM(100_000);
    pubPort = pub.bindToRandomPort("tcp://127.0.0.1");
    if (layout == null) {
      replayThread = null;
      replayPort = -1;
      return;
    }
    ZMQ.Socket router = context.socket(SocketType.ROUTER);
    router.setLinger(0);
    replayPort = router.bindToRandomPort("tcp://127.0.0.1");
    replayThread = new Thread(() -> serveReplay(router, layout), "test-replay-" + name);
    replayThread.start();
  }

  String endpoint() {
    return "tcp://127.0.0.1:" + pubPort;
  }

  String replayEndpoint() {
    return "tcp://127.0.0.1:" + replayPort;
  }

  byte[] payload(long seq) {
    return (name + "-" + seq).getBytes(StandardCharsets.UTF_8);
  }

  /** Waits (bounded) until {@code n} subscriptions have reached the XPUB. */
  void awaitSubscribers(int n) {
    pub.setReceiveTimeOut((int) RecordingSink.WAIT.toMillis());
    for (int i = 0; i < n; i++) {
      assertNotNull(pub.recv(), name + ": subscriber " + (i + 1) + " of " + n + " did not join");
    }
  }

  /** Publishes batch {@code seq} and keeps it for replay. */
  void publish(long seq) {
    keep(seq);
    sendRaw(TOPIC, seqBytes(seq), payload(seq));
  }

  /** Keeps batch {@code seq} for replay without publishing it (a batch the subscriber lost). */
  void keep(long seq) {
    buffer.put(seq, payload(seq));
  }

  /** Drops batches below {@code seq} from the replay buffer (an overrun engine buffer). */
  void forgetBelow(long seq) {
    buffer.keySet().removeIf(s -> s < seq);
  }

  /** Delays each replay answer (the request waits on the server thread). */
  void delayReplies(long millis) {
    replyDelayMs = millis;
  }

  /** Sends an arbitrary multipart message on the XPUB. */
  void sendRaw(byte[]... frames) {
    for (int i = 0; i < frames.length - 1; i++) {
      pub.sendMore(frames[i]);
    }
    pub.send(frames[frames.length - 1]);
  }

  static byte[] seqBytes(long seq) {
    return ByteBuffer.allocate(8).putLong(seq).array();
  }

  private void serveReplay(ZMQ.Socket router, Layout layout) {
    try (ZMQ.Poller poller = context.poller(1)) {
      poller.register(router, ZMQ.Poller.POLLIN);
      while (running) {
        if (poller.poll(20) <= 0) {
          continue;
        }
        byte[] id = router.recv();
        byte[] delimiter = router.hasReceiveMore() ? router.recv() : null;
        byte[] start = router.hasReceiveMore() ? router.recv() : null;
        while (router.hasReceiveMore()) {
          router.recv();
        }
        if (delimiter == null || delimiter.length != 0 || start == null || start.length != 8) {
          continue;
        }
        sleepQuietly(replyDelayMs);
        long from = ByteBuffer.wrap(start).getLong();
        buffer.forEach(
            (seq, payload) -> {
              if (seq >= from) {
                reply(router, layout, id, TOPIC, seqBytes(seq), payload);
              }
            });
        reply(router, layout, id, new byte[0], seqBytes(-1), new byte[0]);
      }
    } finally {
      router.close();
    }
  }

  private static void reply(
      ZMQ.Socket router, Layout layout, byte[] id, byte[] topic, byte[] seq, byte[] payload) {
    router.sendMore(id);
    router.sendMore(new byte[0]);
    if (layout == Layout.WITH_TOPIC) {
      router.sendMore(topic);
    }
    router.sendMore(seq);
    router.send(payload);
  }

  private static void sleepQuietly(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    if (replayThread != null) {
      replayThread.join(RecordingSink.WAIT.toMillis());
    }
    pub.close();
    context.close();
  }
}
