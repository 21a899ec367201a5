package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Many ranks share a few poller threads; the thread count does not follow the rank count. */
class KvEventIngestScaleTest {

  private static final int PUBLISHERS = 100;
  private static final int RANKS_PER_PUBLISHER = 5;
  private static final int POLLERS = 4;

  @Test
  void fiveHundredRanksOnFourPollerThreads() throws Exception {
    int ranks = PUBLISHERS * RANKS_PER_PUBLISHER;
    CountDownLatch delivered = new CountDownLatch(ranks * 2);
    BatchSink sink =
        new BatchSink() {
          @Override
          public void onBatch(WorkerRank rank, long seq, byte[] payload) {
            delivered.countDown();
          }

          @Override
          public void onReset(WorkerRank rank, String reason) {}
        };
    List<TestPublisher> publishers = new ArrayList<>();
    KvEventIngest ingest =
        new KvEventIngest(KvEventIngestOptions.defaults().withPollerThreads(POLLERS), sink);
    try {
      int threadsBefore = Thread.activeCount();
      for (int p = 0; p < PUBLISHERS; p++) {
        TestPublisher pub = new TestPublisher("p" + p);
        publishers.add(pub);
        for (int r = 0; r < RANKS_PER_PUBLISHER; r++) {
          ingest.subscribe(new WorkerRank(p, r), pub.endpoint(), null);
        }
      }
      int publisherThreads = Thread.activeCount() - threadsBefore;
      for (TestPublisher pub : publishers) {
        pub.awaitSubscribers(RANKS_PER_PUBLISHER);
        pub.publish(0);
        pub.publish(1);
      }
      assertTrue(delivered.await(20, TimeUnit.SECONDS), delivered.getCount() + " batches missing");

      Map<WorkerRank, RankStats> stats = ingest.stats();
      assertEquals(ranks, stats.size());
      assertTrue(stats.values().stream().allMatch(s -> s.lastSeq() == 1 && s.batches() == 2));
      List<String> ingestThreads = IngestThreads.named("kvselect-zmq");
      assertEquals(POLLERS + 1, ingestThreads.size(), ingestThreads.toString());
      int ingestGrowth = Thread.activeCount() - threadsBefore - publisherThreads;
      assertTrue(ingestGrowth <= 2, "threads grew with the ranks: " + ingestGrowth);
    } finally {
      ingest.close();
      for (TestPublisher pub : publishers) {
        pub.close();
      }
    }
    assertTrue(IngestThreads.named("kvselect-zmq").isEmpty(), "ingest threads left running");
  }
}
