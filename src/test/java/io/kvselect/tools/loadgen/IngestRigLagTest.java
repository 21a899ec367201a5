package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.tools.mock.WireFormat;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's lag on a real node and real publishers: a publisher whose socket thread is
 * held for a known time shows a lag of at least that time and at most the time since its batch
 * was handed over; once released, the rank catches up and its lag is 0 again. The other
 * publisher, on its own thread, is not held.
 */
class IngestRigLagTest {

  private static final long HELD_NS = Duration.ofMillis(300).toNanos();

  @Test
  void aHeldPublisherShowsAtLeastTheHeldTimeAsLagAndNoMoreThanTheTimeSinceItsBatch()
      throws Exception {
    IngestWorkload[] work = new IngestWorkload[2];
    for (int p = 0; p < 2; p++) {
      work[p] = IngestWorkload.cycle(1, p, 0, 4, 16, 16, WireFormat.MAP);
    }
    try (IngestRig rig = IngestRig.start(1, 2, 2, 16)) {
      LagTracker lag = rig.lag();
      lag.start(System.nanoTime());
      CountDownLatch release = new CountDownLatch(1);
      rig.stall(0, release, Duration.ofSeconds(30));
      long before = System.nanoTime();
      rig.publish(0, work[0].payload(0));
      long after = System.nanoTime(); // the batch was stamped between before and after
      rig.publish(1, work[1].payload(0));
      long sampledAt;
      long[] lags = new long[2];
      try {
        Awaitility.await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> rig.deliveredSeqs()[1] == rig.published(1) - 1);
        Awaitility.await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(5))
            .until(() -> System.nanoTime() - after >= HELD_NS);
        sampledAt = System.nanoTime();
        long[] delivered = rig.deliveredSeqs();
        lags[0] = lag.lagNanos(0, delivered[0], sampledAt);
        lags[1] = lag.lagNanos(1, delivered[1], sampledAt);
        lag.sample(delivered, sampledAt);
      } finally {
        release.countDown();
      }
      assertTrue(lags[0] >= HELD_NS, "held rank's lag " + lags[0] + " ns < " + HELD_NS);
      assertTrue(
          lags[0] <= sampledAt - before, "lag " + lags[0] + " exceeds the time since publishing");
      assertEquals(0, lags[1], "the publisher that was not held has nothing outstanding");
      assertEquals(lags[0], lag.maxNanos());
      Awaitility.await().atMost(Duration.ofSeconds(20)).until(rig::caughtUp);
      long now = System.nanoTime();
      long[] delivered = rig.deliveredSeqs();
      assertEquals(0, lag.sample(delivered, now), "caught up: no lag");
      assertEquals(lags[0], lag.maxNanos(0));
    }
  }
}
