package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.RecordingSink.Delivery;
import io.kvselect.server.events.TestPublisher.Layout;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Gap and catch-up recovery through a JeroMQ ROUTER replay server, in both reply layouts. */
class KvEventReplayTest {

  private static final WorkerRank RANK = new WorkerRank(3, 0);

  private final RecordingSink sink = new RecordingSink();
  private final KvEventIngest ingest =
      new KvEventIngest(
          KvEventIngestOptions.defaults().withReplayTimeout(Duration.ofMillis(1_500)), sink);

  @AfterEach
  void closeIngest() {
    ingest.close();
    assertTrue(IngestThreads.named("kvselect-zmq").isEmpty(), "ingest threads left running");
  }

  private TestPublisher joined(TestPublisher pub, boolean withReplay) {
    ingest.subscribe(RANK, pub.endpoint(), withReplay ? pub.replayEndpoint() : null);
    pub.awaitSubscribers(1);
    return pub;
  }

  @ParameterizedTest
  @EnumSource(Layout.class)
  void forwardGapIsReplayedBeforeTheLiveBatch(Layout layout) throws Exception {
    try (TestPublisher pub = joined(new TestPublisher("p", layout), true)) {
      pub.publish(0);
      pub.publish(1);
      pub.keep(2);
      pub.keep(3);
      pub.publish(4);
      pub.publish(5);
      List<Delivery> got = sink.take(RANK, 6);
      assertEquals("0 1 2 3 4 5", RecordingSink.trace(got));
      for (Delivery d : got) {
        assertArrayEquals(pub.payload(d.seq()), d.payload());
      }
      RankStats stats = ingest.stats().get(RANK);
      assertEquals(1, stats.gaps());
      assertEquals(1, stats.replays());
      assertEquals(0, stats.resets());
      assertEquals(6, stats.batches());
      assertEquals(RankStats.State.LIVE, stats.state());
    }
  }

  @Test
  void slowJoinerCatchesUpFromZero() throws Exception {
    try (TestPublisher pub = joined(new TestPublisher("p", Layout.WITH_TOPIC), true)) {
      pub.keep(0);
      pub.keep(1);
      pub.keep(2);
      pub.publish(3);
      assertEquals("0 1 2 3", sink.trace(RANK, 4));
      RankStats stats = ingest.stats().get(RANK);
      assertEquals(0, stats.gaps());
      assertEquals(1, stats.replays());
      assertEquals(0, stats.resets());
    }
  }

  @Test
  void liveBatchesArrivingDuringTheReplayFollowItInOrder() throws Exception {
    try (TestPublisher pub = joined(new TestPublisher("p", Layout.NO_TOPIC), true)) {
      pub.delayReplies(300);
      pub.publish(0);
      pub.keep(1);
      pub.keep(2);
      pub.publish(3);
      pub.publish(4);
      pub.publish(5);
      pub.keep(6);
      pub.publish(7);
      assertEquals("0 1 2 3 4 5 6 7", sink.trace(RANK, 8));
      RankStats stats = ingest.stats().get(RANK);
      assertEquals(2, stats.gaps());
      assertEquals(2, stats.replays());
      assertEquals(0, stats.resets());
    }
  }

  @Test
  void replayBufferStartingAfterTheRequestedSeqResetsTheRank() throws Exception {
    try (TestPublisher pub = joined(new TestPublisher("p", Layout.WITH_TOPIC), true)) {
      pub.publish(0);
      pub.publish(1);
      pub.keep(2);
      pub.keep(3);
      pub.keep(4);
      pub.forgetBelow(3);
      pub.publish(5);
      pub.publish(6);
      List<Delivery> got = sink.take(RANK, 7);
      assertEquals("0 1 R 3 4 5 6", RecordingSink.trace(got));
      assertTrue(
          got.get(2).reason().contains("started after the requested seq"), got.get(2).reason());
      assertEquals(1, ingest.stats().get(RANK).resets());
    }
  }

  @Test
  void deadReplayEndpointTimesOutResetsAndGoesOnLive() throws Exception {
    int deadPort = io.kvselect.testing.Ports.free();
    try (TestPublisher pub = new TestPublisher("p")) {
      ingest.subscribe(RANK, pub.endpoint(), "tcp://127.0.0.1:" + deadPort);
      pub.awaitSubscribers(1);
      pub.publish(0);
      pub.publish(2);
      pub.publish(3);
      List<Delivery> got = sink.take(RANK, 4);
      assertEquals("0 R 2 3", RecordingSink.trace(got));
      assertTrue(got.get(1).reason().contains("timeout"), got.get(1).reason());
      RankStats stats = ingest.stats().get(RANK);
      assertEquals(1, stats.replays());
      assertEquals(1, stats.resets());
    }
  }

  @Test
  void gapWithoutReplayEndpointResetsAtOnce() throws Exception {
    try (TestPublisher pub = joined(new TestPublisher("p"), false)) {
      pub.publish(4);
      pub.publish(5);
      pub.publish(8);
      List<Delivery> got = sink.take(RANK, 4);
      assertEquals("4 5 R 8", RecordingSink.trace(got));
      assertTrue(got.get(2).reason().contains("no replay endpoint"), got.get(2).reason());
      RankStats stats = ingest.stats().get(RANK);
      assertEquals(1, stats.gaps());
      assertEquals(0, stats.replays());
    }
  }

  @Test
  void restartOfAPublisherWithReplayRecoversTheNewProcessesFirstBatches() throws Exception {
    try (TestPublisher pub = joined(new TestPublisher("p", Layout.WITH_TOPIC), true)) {
      for (long seq = 0; seq < 100; seq++) {
        pub.publish(seq);
      }
      assertEquals(100, sink.take(RANK, 100).size());
      pub.forgetBelow(1_000);
      pub.keep(0);
      pub.keep(1);
      pub.publish(2);
      List<Delivery> got = sink.take(RANK, 4);
      assertEquals("R 0 1 2", RecordingSink.trace(got));
      assertEquals("restart", got.get(0).reason());
    }
  }
}
