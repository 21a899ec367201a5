package io.kvselect.server.liveness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.RankStats;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RetryingListenerWatchTest {

  static RankStats stats(RankStats.State state) {
    return new RankStats(
        state,
        -1,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        3,
        state == RankStats.State.RETRYING
            ? "cannot connect to tcp://127.0.0.1:1 (refused or unreachable); retrying"
            : null);
  }

  static WorkerRecord record(long id, io.kvselect.core.catalog.Lifecycle l) {
    var s =
        io.kvselect.core.catalog.WorkerSpec.builder(id)
            .modelName("m")
            .routingGroup("g")
            .endpoint("http://w" + id)
            .kvEventsEndpoint("tcp://127.0.0.1:1")
            .blockSize(4)
            .build();
    return new WorkerRecord(s, l, List.of());
  }

  @Test
  void warnsOncePerEpisodeAfterTheGraceAndOnlyForSchedulableWorkers() {
    AtomicLong now = new AtomicLong(1_000_000_000L);
    WorkerRank r7 = new WorkerRank(7, 0);
    Map<WorkerRank, RankStats> st = new HashMap<>(Map.of(r7, stats(RankStats.State.RETRYING)));
    Map<WorkerRank, Long> down = new HashMap<>(Map.of(r7, now.get()));
    WorkerRecord[] w = {record(7, io.kvselect.core.catalog.Lifecycle.SCHEDULABLE)};
    RetryingListenerWatch watch =
        new RetryingListenerWatch(
            () -> List.of(w[0]), () -> st, () -> down, now::get, Duration.ofSeconds(10));
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger logger = (Logger) LoggerFactory.getLogger(RetryingListenerWatch.class);
    logger.addAppender(log);
    try {
      now.addAndGet(Duration.ofSeconds(9).toNanos());
      assertEquals(List.of(), watch.check(), "within the grace: no warning");
      now.addAndGet(Duration.ofSeconds(1).toNanos());
      List<RetryingListenerWatch.Warning> first = watch.check();
      assertEquals(1, first.size());
      assertEquals(7, first.get(0).workerId());
      assertEquals(10_000, first.get(0).retryingMillis());
      assertTrue(first.get(0).message().contains("--liveness-grace-secs"), first.get(0).message());
      for (int i = 0; i < 5; i++) {
        now.addAndGet(Duration.ofSeconds(2).toNanos());
        assertEquals(1, watch.check().size());
      }
      assertEquals(
          1,
          log.list.stream().filter(e -> e.getLevel() == Level.WARN).count(),
          "one WARN per episode");

      st.put(r7, stats(RankStats.State.LIVE));
      down.remove(r7);
      assertEquals(List.of(), watch.check(), "connected: the episode ends");
      assertEquals(List.of(), watch.warnings());
      st.put(r7, stats(RankStats.State.RETRYING));
      down.put(r7, now.get());
      now.addAndGet(Duration.ofSeconds(11).toNanos());
      assertEquals(1, watch.check().size());
      assertEquals(
          2,
          log.list.stream().filter(e -> e.getLevel() == Level.WARN).count(),
          "a new episode warns again");

      w[0] = record(7, io.kvselect.core.catalog.Lifecycle.UNSCHEDULABLE);
      assertEquals(List.of(), watch.check(), "an unschedulable worker gets no traffic: no warning");
    } finally {
      logger.detachAppender(log);
    }
  }
}
