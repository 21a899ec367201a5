package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.RecordingSink.Delivery;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Live delivery over real JeroMQ sockets on 127.0.0.1. */
class KvEventIngestTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);

  private final RecordingSink sink = new RecordingSink();
  private KvEventIngest ingest = new KvEventIngest(KvEventIngestOptions.defaults(), sink);

  @AfterEach
  void closeIngest() {
    ingest.close();
    assertTrue(IngestThreads.named("kvselect-zmq").isEmpty(), "ingest threads left running");
  }

  @Test
  void deliversLiveBatchesInOrderWithTheirPayloads() throws Exception {
    try (TestPublisher pub = new TestPublisher("a")) {
      ingest.subscribe(A, pub.endpoint(), null);
      pub.awaitSubscribers(1);
      for (long seq = 0; seq < 10; seq++) {
        pub.publish(seq);
      }
      List<Delivery> got = sink.take(A, 10);
      assertEquals("0 1 2 3 4 5 6 7 8 9", RecordingSink.trace(got));
      for (Delivery d : got) {
        assertArrayEquals(pub.payload(d.seq()), d.payload());
        assertTrue(d.thread().startsWith("kvselect-zmq-"), d.thread());
      }
      RankStats stats = ingest.stats().get(A);
      assertEquals(RankStats.State.LIVE, stats.state());
      assertEquals(9, stats.lastSeq());
      assertEquals(10, stats.batches());
      assertEquals(0, stats.gaps() + stats.replays() + stats.resets() + stats.droppedFrames());
      assertTrue(stats.lastEventAt() > 0);
    }
  }

  @Test
  void malformedMessagesAreCountedAndDroppedWhileEveryRankGoesOn() throws Exception {
    ingest.close();
    ingest = new KvEventIngest(KvEventIngestOptions.defaults().withPollerThreads(1), sink);
    try (TestPublisher a = new TestPublisher("a");
        TestPublisher b = new TestPublisher("b")) {
      ingest.subscribe(A, a.endpoint(), null);
      ingest.subscribe(B, b.endpoint(), null);
      a.awaitSubscribers(1);
      b.awaitSubscribers(1);
      a.sendRaw(TestPublisher.TOPIC, TestPublisher.seqBytes(0));
      b.publish(0);
      a.sendRaw(TestPublisher.TOPIC, new byte[7], a.payload(0));
      a.sendRaw(TestPublisher.TOPIC, TestPublisher.seqBytes(0), a.payload(0), new byte[1]);
      a.sendRaw(TestPublisher.TOPIC);
      a.publish(0);
      b.publish(1);
      a.publish(1);
      assertEquals("0 1", sink.trace(A, 2));
      assertEquals("0 1", sink.trace(B, 2));
      assertEquals(4, ingest.stats().get(A).droppedFrames());
      assertEquals(0, ingest.stats().get(B).droppedFrames());
    }
  }

  @Test
  void duplicatesAreDroppedAsStale() throws Exception {
    try (TestPublisher pub = new TestPublisher("a")) {
      ingest.subscribe(A, pub.endpoint(), null);
      pub.awaitSubscribers(1);
      for (long seq : new long[] {0, 1, 1, 1, 2}) {
        pub.publish(seq);
      }
      assertEquals("0 1 2", sink.trace(A, 3));
      assertEquals(2, ingest.stats().get(A).stale());
      assertEquals(0, ingest.stats().get(A).resets());
    }
  }

  @Test
  void sequenceGoingBackToZeroIsARestart() throws Exception {
    try (TestPublisher pub = new TestPublisher("a")) {
      ingest.subscribe(A, pub.endpoint(), null);
      pub.awaitSubscribers(1);
      for (long seq : new long[] {0, 1, 2, 3, 0, 1}) {
        pub.publish(seq);
      }
      List<Delivery> got = sink.take(A, 7);
      assertEquals("0 1 2 3 R 0 1", RecordingSink.trace(got));
      assertEquals("restart", got.get(4).reason());
      RankStats stats = ingest.stats().get(A);
      assertEquals(1, stats.resets());
      assertEquals(1, stats.lastSeq());
    }
  }

  @Test
  void twoRanksOfOneWorkerOnTwoPublishersStayApart() throws Exception {
    WorkerRank r0 = new WorkerRank(7, 0);
    WorkerRank r1 = new WorkerRank(7, 1);
    try (TestPublisher p0 = new TestPublisher("dp0");
        TestPublisher p1 = new TestPublisher("dp1")) {
      ingest.subscribe(r0, p0.endpoint(), null);
      ingest.subscribe(r1, p1.endpoint(), null);
      p0.awaitSubscribers(1);
      p1.awaitSubscribers(1);
      for (long seq = 0; seq < 5; seq++) {
        p0.publish(seq);
        if (seq < 3) {
          p1.publish(seq);
        }
      }
      List<Delivery> got0 = sink.take(r0, 5);
      List<Delivery> got1 = sink.take(r1, 3);
      assertEquals("0 1 2 3 4", RecordingSink.trace(got0));
      assertEquals("0 1 2", RecordingSink.trace(got1));
      assertTrue(got0.stream().allMatch(d -> d.text().startsWith("dp0-")));
      assertTrue(got1.stream().allMatch(d -> d.text().startsWith("dp1-")));
      assertEquals(List.of(r0, r1), List.copyOf(ingest.stats().keySet()));
    }
  }

  @Test
  void unsubscribeClosesTheSocketAndStopsDelivery() throws Exception {
    try (TestPublisher pub = new TestPublisher("a")) {
      ingest.subscribe(A, pub.endpoint(), null);
      pub.awaitSubscribers(1);
      pub.publish(0);
      pub.publish(1);
      assertEquals("0 1", sink.trace(A, 2));
      ingest.unsubscribe(A).get(5, TimeUnit.SECONDS);
      assertFalse(ingest.stats().containsKey(A));
      pub.publish(2);
      pub.publish(3);
      sink.assertQuiet(A, Duration.ofMillis(200));
      ingest.unsubscribe(A).get(5, TimeUnit.SECONDS);
      assertFalse(ingest.stats().containsKey(A), "unsubscribing an unknown rank is a no-op");
    }
  }

  @Test
  void resubscribingWithANewEndpointStartsAFreshCursor() throws Exception {
    try (TestPublisher old = new TestPublisher("old");
        TestPublisher fresh = new TestPublisher("new")) {
      ingest.subscribe(A, old.endpoint(), null);
      old.awaitSubscribers(1);
      old.publish(0);
      old.publish(1);
      assertEquals("0 1", sink.trace(A, 2));
      ingest.subscribe(A, fresh.endpoint(), null);
      fresh.awaitSubscribers(1);
      fresh.publish(0);
      old.publish(2);
      Delivery d = sink.take(A, 1).get(0);
      assertEquals("new-0", d.text());
      sink.assertQuiet(A, Duration.ofMillis(100));
    }
  }

  @Test
  void ranksArePlacedOnThePollerThatOwnsTheirShard() throws Exception {
    ingest.close();
    ingest = new KvEventIngest(KvEventIngestOptions.defaults().withPollerThreads(3), sink);
    try (TestPublisher pub = new TestPublisher("shards")) {
      for (int r = 0; r < 6; r++) {
        ingest.subscribe(new WorkerRank(9, r), r % 5, pub.endpoint(), null, sink);
      }
      pub.awaitSubscribers(6);
      pub.publish(0);
      for (int r = 0; r < 6; r++) {
        Delivery d = sink.take(new WorkerRank(9, r), 1).get(0);
        assertEquals("kvselect-zmq-" + (r % 5) % 3, d.thread(), "rank " + r + " on shard " + r % 5);
        assertEquals((r % 5) % 3, ingest.pollerOf(r % 5));
      }
    }
  }

  @Test
  void afterCloseRunsOnTheOwnerBetweenTheOldSocketsLastBatchAndTheNewSocketsFirst()
      throws Exception {
    try (TestPublisher old = new TestPublisher("old");
        TestPublisher fresh = new TestPublisher("new")) {
      ingest.subscribe(A, 2, old.endpoint(), null, sink);
      old.awaitSubscribers(1);
      old.publish(0);
      old.publish(1);
      assertEquals("0 1", sink.trace(A, 2));
      ingest.unsubscribe(A, 2, () -> sink.onReset(A, "after close"));
      ingest.subscribe(A, 2, fresh.endpoint(), null, sink);
      fresh.awaitSubscribers(1);
      fresh.publish(7);
      old.publish(2);
      List<Delivery> got = sink.take(A, 2);
      assertEquals("R 7", RecordingSink.trace(got));
      assertEquals("after close", got.get(0).reason());
      assertEquals("kvselect-zmq-" + ingest.pollerOf(2), got.get(0).thread());
      assertEquals("new-7", got.get(1).text());
      sink.assertQuiet(A, Duration.ofMillis(100));
    }
  }

  @Test
  void rejectsUnknownSchemesAndUseAfterClose() {
    assertThrows(IllegalArgumentException.class, () -> ingest.subscribe(A, "http://x:1", null));
    assertThrows(
        IllegalArgumentException.class, () -> ingest.subscribe(A, "tcp://x:1", "udp://x:2"));
    assertThrows(IllegalArgumentException.class, () -> ingest.subscribe(A, "garbage", null));
    assertThrows(IllegalArgumentException.class, () -> ingest.subscribe(A, "tcp://x:1", "7"));
    ingest.close();
    assertThrows(IllegalStateException.class, () -> ingest.subscribe(A, "tcp://127.0.0.1:1", null));
  }
}
