package io.kvselect.server.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A subscription whose host does not resolve yet: the ingest retries on the rank's poller thread
 * with a doubling, capped delay, shows {@code RETRYING} with the last error, never throws to the
 * subscriber, and connects once the name resolves.
 */
class KvEventIngestRetryTest {

  private static final WorkerRank A = new WorkerRank(1, 0);

  private final RecordingSink sink = new RecordingSink();
  private final AtomicBoolean resolvable = new AtomicBoolean();
  private final AtomicInteger lookups = new AtomicInteger();
  private final KvEventIngest ingest =
      new KvEventIngest(
          KvEventIngestOptions.defaults()
              .withPollerThreads(1)
              .withRetryBackoff(Duration.ofMillis(10), Duration.ofMillis(40))
              .withResolver(
                  host -> {
                    lookups.incrementAndGet();
                    if (!host.equals("localhost")) {
                      throw new UnknownHostException("unexpected host " + host);
                    }
                    if (!resolvable.get()) {
                      throw new UnknownHostException(host + ": not in DNS yet");
                    }
                    return InetAddress.getLoopbackAddress();
                  }),
          sink);

  @AfterEach
  void closeIngest() {
    ingest.close();
    assertTrue(IngestThreads.named("kvselect-zmq").isEmpty(), "ingest threads left running");
  }

  @Test
  void aNameThatResolvesLateIsRetriedWithCappedBackoffThenConnected() throws Exception {
    try (TestPublisher pub = new TestPublisher("late-dns")) {
      String endpoint = pub.endpoint().replace("127.0.0.1", "localhost");
      ingest.subscribe(A, endpoint, null);

      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                RankStats st = ingest.stats().get(A);
                assertEquals(RankStats.State.RETRYING, st.state());
                assertTrue(st.retries() >= 4, "retries " + st.retries());
                assertTrue(st.lastError().contains("localhost: not in DNS yet"), st.lastError());
                assertTrue(
                    st.lastError().endsWith("retrying in 40 ms"),
                    "the delay is capped: " + st.lastError());
              });
      int failedLookups = lookups.get();
      assertTrue(failedLookups >= 4);

      resolvable.set(true);
      pub.awaitSubscribers(1);
      pub.publish(0);
      pub.publish(1);
      assertEquals("0 1", sink.trace(A, 2));
      RankStats st = ingest.stats().get(A);
      assertEquals(RankStats.State.LIVE, st.state());
      assertNull(st.lastError(), "cleared once connected");
      int afterConnect = lookups.get();
      pub.publish(2);
      assertEquals("2", sink.trace(A, 1));
      assertEquals(afterConnect, lookups.get(), "no lookups once connected");
    }
  }

  @Test
  void aRankWaitingToRetryCanBeUnsubscribed() throws Exception {
    ingest.subscribe(A, "tcp://localhost:9", null);
    await().atMost(Duration.ofSeconds(10)).until(() -> ingest.stats().get(A).retries() >= 2);
    AtomicBoolean ranAfterClose = new AtomicBoolean();
    ingest.unsubscribe(A, 0, () -> ranAfterClose.set(true)).get(5, TimeUnit.SECONDS);
    assertTrue(ranAfterClose.get());
    assertTrue(ingest.stats().isEmpty());
    int after = lookups.get();
    resolvable.set(true);
    sink.assertQuiet(A, Duration.ofMillis(150));
    assertEquals(after, lookups.get(), "no retry after the unsubscribe");
  }
}
