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
 * <p>Unreachable means either of:
 * <ul>
 *   <li>one of the worker's ranks has had no TCP connection to its KV-event publisher for at least
 *       the grace period (the SUB socket's connection events: disconnected, connection refused and
 *       retried, or never connected since the rank was subscribed); see {@link
 *       KvEventsCoordinator#unreachableSince};
 *   <li>the worker has a {@code health_url} and every probe of it (HTTP GET, a 2xx answer within
 *       the probe timeout counts as healthy) has failed for at least the grace period.
 * </ul>
 * The whole worker is taken out, since its ranks share one engine. A check runs every quarter of
 * the grace period (at least 50 ms, at most 1 s) on this verticle's event loop, and starts a probe
 * of each health URL that has none in flight; it reads volatile connection state and probe
 * outcomes and, on a change, calls {@link SelectionService#setUnreachable}, so the catalog stays
 * the owner of the lifecycle and no poller thread touches it.
 *
 * <p>Ownership: {@link #failingSince} and {@link #probing} are confined to this verticle's
 * context (probe callbacks run on it).
 */
public final class LivenessVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(LivenessVerticle.class);

  private final SelectionService service;
  private final KvEventsCoordinator events;
  private final Duration grace;
  private long timer = -1;
  private io.vertx.core.http.HttpClient http;

  /** Worker id -> {@code nanoTime} of the first failed probe of its health URL since the last success. */
  private final Map<Long, Long> failingSince = new java.util.HashMap<>();

  /** Workers whose health URL has a probe in flight. */
  private final java.util.Set<Long> probing = new java.util.HashSet<>();

  /** {@code events} is null in approximate mode: only health URLs are watched then. */
  public LivenessVerticle(SelectionService service, KvEventsCoordinator events, Duration grace) {
    this.service = service;
    this.events = events;
    this.grace = grace;
  }

  /** The longest a probe may take before it counts as failed. */
  static long probeTimeoutMillis(Duration grace) {
    return Math.max(100, Math.min(2_000, grace.toMillis()));
  }

  /** How often the check runs for a grace period. */
  static long periodMillis(Duration grace) {
    return Math.max(50, Math.min(1_000, grace.toMillis() / 4));
  }

  @Override
  public Future<?> start() {
    http =
        vertx.createHttpClient(
            new io.vertx.core.http.HttpClientOptions()
                .setConnectTimeout((int) probeTimeoutMillis(grace))
                .setKeepAlive(false));
    timer = vertx.setPeriodic(periodMillis(grace), id -> check(System.nanoTime()));
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    return http == null ? Future.succeededFuture() : http.close();
  }

  private void check(long now) {
    Map<WorkerRank, Long> down = events == null ? Map.of() : events.unreachableSince();
    java.util.List<WorkerRecord> workers = service.listWorkers(null, null);
    java.util.Set<Long> watched = new java.util.HashSet<>();
    for (WorkerRecord w : workers) {
      if (w.spec().healthUrl() != null) {
        watched.add(w.workerId());
        probe(w.workerId(), w.spec().healthUrl());
      }
    }
    failingSince.keySet().retainAll(watched);
    for (WorkerRecord w : workers) {
      String marked = service.unreachableReason(w.workerId());
      if (!w.schedulable() && marked == null) {
        continue;
      }
      String reason = reason(w, down, now);
      if (Objects.equals(reason, marked)) {
        continue;
      }
      String id = Long.toUnsignedString(w.workerId());
      service
          .setUnreachable(w.workerId(), reason)
          .whenComplete(
              (r, e) -> {
                if (e != null) {
                  LOG.warn("worker {}: liveness change failed: {}", id, e.toString());
                } else if (reason != null) {
                  LOG.warn("worker {} is unschedulable: {}", id, reason);
                } else {
                  LOG.info(
                      "worker {} is reachable again: {}",
                      id,
                      r == null ? "removed" : r.lifecycle().wireName());
                }
              });
    }
  }

  /** Starts a GET of {@code url} unless one is in flight; its outcome updates {@link #failingSince}. */
  private void probe(long workerId, String url) {
    if (!probing.add(workerId)) {
      return;
    }
    long started = System.nanoTime();
    http.request(
            new io.vertx.core.http.RequestOptions()
                .setAbsoluteURI(url)
                .setMethod(io.vertx.core.http.HttpMethod.GET)
                .setTimeout(probeTimeoutMillis(grace)))
        .compose(req -> req.send())
        .compose(resp -> resp.body().map(b -> resp.statusCode()))
        .onComplete(
            ar -> {
              probing.remove(workerId);
              if (ar.succeeded() && ar.result() >= 200 && ar.result() < 300) {
                failingSince.remove(workerId);
              } else {
                failingSince.putIfAbsent(workerId, started);
              }
            });
  }

  /** Why {@code w} is unreachable now, or null; the text is stable while the cause lasts. */
  private String reason(WorkerRecord w, Map<WorkerRank, Long> down, long now) {
    for (WorkerRank r : w.ranks()) {
      Long since = down.get(r);
      if (since != null && now - since >= grace.toNanos()) {
        return String.format(
            Locale.ROOT,
            "unreachable: no connection to the kv events endpoint %s of dp_rank %d"
                + " for more than %s s",
            w.spec().kvEventsEndpointFor(r.dpRank()),
            r.dpRank(),
            seconds(grace));
      }
    }
    Long failing = failingSince.get(w.workerId());
    if (failing != null && now - failing >= grace.toNanos()) {
      return String.format(
          Locale.ROOT,
          "unreachable: health check %s failing for more than %s s",
          w.spec().healthUrl(),
          seconds(grace));
    }
    return null;
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0
        ? Long.toString(d.toSeconds())
        : Double.toString(d.toMillis() / 1000.0);
  }
}
