package io.kvselect.server.metrics;

import io.kvselect.core.history.IntervalRecorder;
import io.kvselect.core.history.SampleRing;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.BookingListener;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.events.RankStats;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The status page's recent history ({@code GET /ui/history}): every {@link #PERIOD_MS} ms, over
 * the last {@link #WINDOW_MS} ms, this node's selections per second, the share of booked prompt
 * tokens credited as cached, the p99 of selection latency (request received to answer sent,
 * router-queue wait included), the requests waiting in its router queues, and per worker the age
 * of its newest KV event (the most stale of its ranks; absent before its first event).
 *
 * <p>Figures are this node's own: selections and bookings counted by its HTTP routes, its queues,
 * its listeners. Ownership: {@link #sample} runs on the timer of the verticle that starts it
 * ({@code MainVerticle}), the only writer of {@link #ring}; the {@link #recorder} is written by
 * the HTTP event loops and drained here (see {@link IntervalRecorder}, {@link SampleRing}).
 */
public final class HistorySampler implements BookingListener {

  /** Sampling period. */
  public static final long PERIOD_MS = 2_000;

  /** How far back the history reaches. */
  public static final long WINDOW_MS = 300_000;

  /**
   * One sample. {@code cachedShare} is NaN and {@code p99Nanos} -1 when no booking, resp. no
   * selection, fell in the interval; {@code eventAgeMs} maps worker ids (unsigned decimal) to ages.
   */
  public record Sample(
      long atMs,
      double selectionsPerSec,
      double cachedShare,
      long p99Nanos,
      int queueDepth,
      Map<String, Long> eventAgeMs) {}

  private final SelectionService service;
  private final Clock clock;
  private final IntervalRecorder recorder =
      new IntervalRecorder(4096, new java.util.SplittableRandom(16));
  private final SampleRing<Sample> ring = new SampleRing<>((int) (WINDOW_MS / PERIOD_MS));
  private volatile KvEventsCoordinator events;
  private long lastMs;

  public HistorySampler(SelectionService service, Clock clock) {
    this.service = service;
    this.clock = clock;
    this.lastMs = clock.millis();
    service.addBookingListener(this);
  }

  /** The KV-event listeners whose event ages are sampled (none in approximate mode). */
  public void events(KvEventsCoordinator e) {
    this.events = e;
  }

  /** A selection answered with {@code status} after {@code nanos}; only successes are counted. */
  public void selection(int status, long nanos) {
    if (status < 400) {
      recorder.selected(nanos);
    }
  }

  @Override
  public void booked(Booked b) {
    recorder.booked(b.islTokens(), b.islTokens() - b.effectivePrefillTokens());
  }

  /** Takes one sample: the interval since the previous one. */
  public void sample() {
    long now = clock.millis();
    long elapsed = Math.max(1, now - lastMs);
    lastMs = now;
    IntervalRecorder.Interval in = recorder.drain();
    int queued =
        service.inspection().queueDepths().values().stream().mapToInt(Integer::intValue).sum();
    Map<String, Long> ages = new TreeMap<>();
    KvEventsCoordinator ev = events;
    if (ev != null) {
      for (Map.Entry<WorkerRank, RankStats> e : ev.stats().entrySet()) {
        long at = e.getValue().lastEventAt();
        if (at > 0) {
          ages.merge(
              Long.toUnsignedString(e.getKey().workerId()), Math.max(0, now - at), Math::max);
        }
      }
    }
    ring.add(
        new Sample(
            now,
            in.selections() * 1000.0 / elapsed,
            in.cachedShare(),
            in.p99Nanos(),
            queued,
            Map.copyOf(ages)));
  }

  /** The samples held, oldest first. */
  public List<Sample> samples() {
    return ring.snapshot();
  }
}
