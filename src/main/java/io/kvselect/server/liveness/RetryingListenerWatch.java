package io.kvselect.server.liveness;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.RankStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warns about a worker that still receives selections although its engine looks dead: it is
 * {@code schedulable} and one of its ranks' KV-event listener has been {@code retrying} (no TCP
 * connection to the publisher) for at least {@link #GRACE}. Without {@code --liveness-grace-secs}
 * (the default, as in Dynamo) nothing takes such a worker out, and being the least loaded it
 * attracts the traffic.
 *
 * <p>One WARN per worker per episode: when a worker starts to qualify, and one INFO when it stops
 * (its listener connected, it was removed or it became unschedulable); never one per retry.
 * {@link #warnings()} is what {@code /ui/state} and the status page show.
 *
 * <p>Ownership: {@link #check} runs on one thread (the main verticle's timer) and is the only
 * user of {@link #warned}; the published {@link #current} list is immutable and volatile, so any
 * thread may read it.
 */
public final class RetryingListenerWatch {

  private static final Logger LOG = LoggerFactory.getLogger(RetryingListenerWatch.class);

  /** How long a schedulable worker's listener may retry before the warning. */
  public static final Duration GRACE = Duration.ofSeconds(10);

  /** One warned worker: its first retrying rank, since how long, and the listener's last error. */
  public record Warning(long workerId, int dpRank, long retryingMillis, String lastError) {

    public String message() {
      return "worker "
          + Long.toUnsignedString(workerId)
          + " is schedulable but its KV-event listener (rank "
          + dpRank
          + ") has been retrying for "
          + retryingMillis / 1000
          + " s ("
          + lastError
          + "): it still receives"
          + " selections; --liveness-grace-secs takes such a worker out";
    }
  }

  private final Supplier<List<WorkerRecord>> workers;
  private final Supplier<Map<WorkerRank, RankStats>> stats;
  private final Supplier<Map<WorkerRank, Long>> unreachableSince;
  private final LongSupplier nanoTime;
  private final long graceNanos;
  private final Set<Long> warned = new HashSet<>();
  private volatile List<Warning> current = List.of();

  /**
   * {@code unreachableSince} gives the {@code nanoTime} since which each rank has had no
   * connection (as {@code KvEventsCoordinator#unreachableSince}), read with {@code nanoTime}.
   */
  public RetryingListenerWatch(
      Supplier<List<WorkerRecord>> workers,
      Supplier<Map<WorkerRank, RankStats>> stats,
      Supplier<Map<WorkerRank, Long>> unreachableSince,
      LongSupplier nanoTime,
      Duration grace) {
    this.workers = workers;
    this.stats = stats;
    this.unreachableSince = unreachableSince;
    this.nanoTime = nanoTime;
    this.graceNanos = grace.toNanos();
  }

  /** Re-evaluates every worker, logs the episodes that began or ended, and returns the warnings. */
  public List<Warning> check() {
    long now = nanoTime.getAsLong();
    Map<WorkerRank, RankStats> st = stats.get();
    Map<WorkerRank, Long> down = unreachableSince.get();
    List<Warning> out = new ArrayList<>();
    for (WorkerRecord w : workers.get()) {
      if (!w.schedulable()) {
        continue;
      }
      for (WorkerRank r : w.ranks()) {
        RankStats s = st.get(r);
        Long since = down.get(r);
        if (s != null
            && s.state() == RankStats.State.RETRYING
            && since != null
            && now - since >= graceNanos) {
          out.add(new Warning(w.workerId(), r.dpRank(), (now - since) / 1_000_000, s.lastError()));
          break;
        }
      }
    }
    Set<Long> now2 = new HashSet<>();
    for (Warning x : out) {
      now2.add(x.workerId());
      if (warned.add(x.workerId())) {
        LOG.warn(x.message());
      }
    }
    for (var it = warned.iterator(); it.hasNext(); ) {
      long id = it.next();
      if (!now2.contains(id)) {
        it.remove();
        LOG.info(
            "worker {}: its KV-event listener no longer warrants a warning (connected, removed or unschedulable)",
            Long.toUnsignedString(id));
      }
    }
    current = List.copyOf(out);
    return current;
  }

  /** The warnings of the last {@link #check}. */
  public List<Warning> warnings() {
    return current;
  }

  /** Workers warned about in the current episode (for tests). */
  Set<Long> warned() {
    return Set.copyOf(warned);
  }
}
