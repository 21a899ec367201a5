package io.kvselect.server.liveness;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventsCoordinator;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code --liveness-grace-secs}: a worker whose engine has been unreachable for the grace period
 * becomes {@code unschedulable} with the reason, and schedulable again when it comes back.
 *
 * <p>Unreachable means: one of the worker's ranks has had no TCP connection to its KV-event
 * publisher for at least the grace period (the SUB socket's connection events: disconnected,
 * connection refused and retried, or never connected since the rank was subscribed); see {@link
 * KvEventsCoordinator#unreachableSince}. The whole worker is taken out, since its ranks share one
 * engine. A check runs every quarter of the grace period (at least 50 ms, at most 1 s) on this
 * verticle's event loop; it only reads volatile connection state and, on a change, calls {@link
 * SelectionService#setUnreachable}, so the catalog stays the owner of the lifecycle and no poller
 * thread touches it.
 *
 * <p>Ownership: stateless between checks apart from the timer; confined to this verticle's
 * context.
 */
public final class LivenessVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(LivenessVerticle.class);

  private final SelectionService service;
  private final KvEventsCoordinator events;
  private final Duration grace;
  private long timer = -1;

  public LivenessVerticle(SelectionService service, KvEventsCoordinator events, Duration grace) {
    this.service = service;
    this.events = Objects.requireNonNull(events, "events");
    this.grace = grace;
  }

  /** How often the check runs for a grace period. */
  static long periodMillis(Duration grace) {
    return Math.max(50, Math.min(1_000, grace.toMillis() / 4));
  }

  @Override
  public Future<?> start() {
    timer = vertx.setPeriodic(periodMillis(grace), id -> check(System.nanoTime()));
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return Future.succeededFuture();
  }

  private void check(long now) {
    Map<WorkerRank, Long> down = events.unreachableSince();
    for (WorkerRecord w : service.listWorkers(null, null)) {
      String marked = service.unreachableReason(w.workerId());
      if (!w.schedulable() && marked == null) {
        continue;
      }
      String reason = reason(w, down, now);
      if (Objects.equals(reason, marked)) {
        continue;
      }
      String id = Long.toUnsignedString(w.workerId());
      service.setUnreachable(w.workerId(), reason).whenComplete((r, e) -> {
        if (e != null) {
          LOG.warn("worker {}: liveness change failed: {}", id, e.toString());
        } else if (reason != null) {
          LOG.warn("worker {} is unschedulable: {}", id, reason);
        } else {
          LOG.info("worker {} is reachable again: {}", id, r == null ? "removed" : r.lifecycle().wireName());
        }
      });
    }
  }

  /** Why {@code w} is unreachable now, or null; the text is stable while the cause lasts. */
  private String reason(WorkerRecord w, Map<WorkerRank, Long> down, long now) {
    for (WorkerRank r : w.ranks()) {
      Long since = down.get(r);
      if (since != null && now - since >= grace.toNanos()) {
        return String.format(Locale.ROOT, "unreachable: no connection to the kv events endpoint %s of dp_rank %d"
            + " for more than %s s", w.spec().kvEventsEndpointFor(r.dpRank()), r.dpRank(), seconds(grace));
      }
    }
    return null;
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0 ? Long.toString(d.toSeconds()) : Double.toString(d.toMillis() / 1000.0);
  }
}
