package io.kvselect.tools.mock;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Several publishers hosted on one {@link PublisherThread}: each keeps its own sequence numbers
 * and replay ring, and an idle thread (blocked in its poll) still answers replay requests and sends
 * new batches. The thread's idle poll timeout is an hour here, so an answer can only come from the
 * poll waking on the ROUTER or on the wake-up pipe, never from the timeout.
 */
class PublisherThreadTest {

  private static final long HOUR_MS = 3_600_000;

  private static byte[] payload(int publisher, long n) {
    return ("p" + publisher + "-" + n).getBytes();
  }

  private static List<byte[]> recvMsg(ZMQ.Socket s) {
    List<byte[]> frames = new ArrayList<>();
    s.setReceiveTimeOut(10_000);
    do {
      byte[] f = s.recv();
      assertNotNull(f, "no message within 10 s");
      frames.add(f);
    } while (s.hasReceiveMore());
    return frames;
  }

  @Test
  void idleSharedThreadAnswersReplaysAndSendsWithoutWaitingForItsPollTimeout() throws Exception {
    PublisherThread thread = new PublisherThread("test-pub-group", 1, HOUR_MS);
    KvEventPublisher[] pubs = new KvEventPublisher[3];
    try (ZContext ctx = new ZContext()) {
      KvEventPublisher.Endpoints[] eps = new KvEventPublisher.Endpoints[pubs.length];
      for (int p = 0; p < pubs.length; p++) {
        pubs[p] = new KvEventPublisher(thread, "127.0.0.1", new int[1], 0, "t", ReplayLayout.TOPIC);
        eps[p] = pubs[p].ready().get(10, TimeUnit.SECONDS);
      }
      for (int p = 0; p < pubs.length; p++) {
        for (int n = 0; n <= p + 1; n++) {
          pubs[p].publish(0, payload(p, n));
        }
      }
      for (int p = 0; p < pubs.length; p++) {
        int last = p + 1;
        KvEventPublisher pub = pubs[p];
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> pub.lastSeq(0) == last);
      }
      // every publisher has sent all it had: the thread now blocks in a one-hour poll
      for (int p = pubs.length - 1; p >= 0; p--) {
        ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
        dealer.setHandshakeIvl(1_000);
        dealer.connect(eps[p].replay());
        dealer.send(new byte[0], ZMQ.SNDMORE);
        dealer.send(ByteBuffer.allocate(8).putLong(1).array(), 0);
        for (long n = 1; n <= p + 1; n++) {
          List<byte[]> m = recvMsg(dealer);
          assertEquals(4, m.size());
          assertArrayEquals(ByteBuffer.allocate(8).putLong(n).array(), m.get(2));
          assertArrayEquals(payload(p, n), m.get(3), "publisher " + p + " replays its own ring");
        }
        List<byte[]> end = recvMsg(dealer);
        assertArrayEquals(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1}, end.get(2));
      }
      ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
      sub.subscribe(new byte[0]);
      sub.connect(eps[0].publishers().get(0));
      // a SUB joins asynchronously: publish until one arrives, each publish waking the idle thread
      sub.setReceiveTimeOut(200);
      byte[] topic = null;
      for (int attempt = 0; attempt < 50 && topic == null; attempt++) {
        pubs[0].publish(0, payload(0, 100 + attempt));
        topic = sub.recv();
      }
      assertNotNull(topic, "a batch published to an idle thread never arrived");
      List<byte[]> rest = recvMsg(sub);
      assertEquals(2, rest.size());
    } finally {
      for (KvEventPublisher p : pubs) {
        if (p != null) {
          p.close();
        }
      }
      thread.close();
    }
  }

  @Test
  void closingOneHostedPublisherLeavesTheOthersRunningOnTheThread() throws Exception {
    PublisherThread thread = new PublisherThread("test-pub-shared", 1);
    try (ZContext ctx = new ZContext()) {
      KvEventPublisher gone =
          new KvEventPublisher(thread, "127.0.0.1", new int[1], 0, "", ReplayLayout.TOPIC);
      KvEventPublisher kept =
          new KvEventPublisher(thread, "127.0.0.1", new int[1], 0, "", ReplayLayout.LEGACY);
      gone.ready().get(10, TimeUnit.SECONDS);
      String replay = kept.ready().get(10, TimeUnit.SECONDS).replay();
      CompletableFuture<String> host = new CompletableFuture<>();
      thread.execute(
          t -> host.complete(Thread.currentThread().getName() + " " + (gone.router() != null)));
      assertEquals("test-pub-shared true", host.get(10, TimeUnit.SECONDS));
      gone.close();
      kept.publish(0, payload(1, 0));
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> kept.lastSeq(0) == 0);
      ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
      dealer.setHandshakeIvl(1_000);
      dealer.connect(replay);
      dealer.send(new byte[0], ZMQ.SNDMORE);
      dealer.send(new byte[8], 0);
      List<byte[]> m = recvMsg(dealer);
      assertEquals(3, m.size());
      assertArrayEquals(payload(1, 0), m.get(2));
      kept.close();
      assertNull(kept.router());
    } finally {
      thread.close();
    }
  }
}
