package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.kvselect.core.index.WorkerRank;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Records what the ingest delivers, per rank, and renders it as a trace such as
 * {@code "0 1 R 3 4"} (sequence numbers, {@code R} for a reset) for compact assertions.
 */
final class RecordingSink implements BatchSink {

  /** One sink call; {@code reason} is null for a batch. */
  record Delivery(WorkerRank rank, long seq, byte[] payload, String reason, String thread) {

    String token() {
      return reason != null ? "R" : Long.toString(seq);
    }

    String text() {
      return new String(payload, StandardCharsets.UTF_8);
    }
  }

  static final Duration WAIT = Duration.ofSeconds(5);

  private final Map<WorkerRank, LinkedBlockingQueue<Delivery>> queues = new ConcurrentHashMap<>();

  @Override
  public void onBatch(WorkerRank rank, long seq, byte[] payload) {
    queue(rank).add(new Delivery(rank, seq, payload, null, Thread.currentThread().getName()));
  }

  @Override
  public void onReset(WorkerRank rank, String reason) {
    queue(rank).add(new Delivery(rank, -1, null, reason, Thread.currentThread().getName()));
  }

  private LinkedBlockingQueue<Delivery> queue(WorkerRank rank) {
    return queues.computeIfAbsent(rank, r -> new LinkedBlockingQueue<>());
  }

  /** The next {@code n} calls for {@code rank}, waiting at most {@link #WAIT} for each. */
  List<Delivery> take(WorkerRank rank, int n) throws InterruptedException {
    List<Delivery> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Delivery d = queue(rank).poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      if (d == null) {
        fail("rank " + rank + ": only " + out.size() + " of " + n + " deliveries: " + trace(out));
      }
      out.add(d);
    }
    return out;
  }

  /** The next {@code n} calls for {@code rank} as a trace. */
  String trace(WorkerRank rank, int n) throws InterruptedException {
    return trace(take(rank, n));
  }

  static String trace(List<Delivery> deliveries) {
    return String.join(" ", deliveries.stream().map(Delivery::token).toList());
  }

  /** Asserts that nothing arrives for {@code rank} within {@code quiet}. */
  void assertQuiet(WorkerRank rank, Duration quiet) throws InterruptedException {
    assertNull(queue(rank).poll(quiet.toMillis(), TimeUnit.MILLISECONDS), "unexpected delivery");
  }
}
