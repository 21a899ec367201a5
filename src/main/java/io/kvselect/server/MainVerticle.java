package io.kvselect.server;

import io.kvselect.core.service.SelectionService;
import io.kvselect.server.api.ApiOperations;
import io.kvselect.server.api.HttpApiVerticle;
import io.kvselect.server.bus.BusEvents;
import io.kvselect.server.bus.EventBusApi;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.BatchSink;
import io.kvselect.server.events.KvEventIngestVerticle;
import io.kvselect.server.events.KvEventIngestOptions;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.liveness.RetryingListenerWatch;
import io.kvselect.server.metrics.HistorySampler;
import io.kvselect.server.metrics.ServiceMetrics;
import io.kvselect.server.sync.IndexRecovery;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where a node is wired: it deploys the HTTP adapter instances and the event-bus
 * API ({@link EventBusApi}, with the {@link BusEvents} publisher) over a shared
 * {@link SelectionService}, subscribes to the engines' KV events (when the index is event-driven),
 * and runs the periodic housekeeping (request expiry, TTL indexes, idle
 * session bindings) and the status page's history sampler ({@link HistorySampler}).
 */
public final class MainVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(MainVerticle.class);

  /** Housekeeping period. */
  static final long HOUSEKEEPING_MS = 5_000;

  private final SelectionService service;
  private final ServiceMetrics metrics;
  private final String host;
  private final int port;
  private final int httpInstances;
  private final int eventThreads;
  private KvEventsCoordinator events;
  private final AtomicInteger actualPort = new AtomicInteger(-1);
  private long timer = -1;
  /** The status page's history sampler ({@link HistorySampler}), on this verticle's context. */
  private long historyTimer = -1;
  /** Warns about schedulable workers whose listener keeps retrying; null in approximate mode. */
  private volatile RetryingListenerWatch watch;
  private long watchTimer = -1;

  private final java.util.List<String> indexerPeers;
  /** The effective configuration served by {@code GET /config}; never modified. */
  private final java.util.Map<String, Object> config;
  private final io.kvselect.server.security.HttpGuards guards;
  private volatile IndexRecovery.Outcome recovery = IndexRecovery.Outcome.disabled();
  /** Event-bus API instances; -1 means as many as HTTP instances (at least one). */
  private int busInstances = -1;
  private io.kvselect.server.sync.replica.ReplicaSync replica;
  private BusEvents busEvents;

  /** What {@code GET /cluster} and {@code /ready} report about clustering. */
  private final io.kvselect.server.cluster.ClusterView cluster;

  public MainVerticle(SelectionService service, ServiceMetrics metrics, String host, int port, int httpInstances,
      int eventThreads, java.util.List<String> indexerPeers, java.util.Map<String, Object> config) {
    this(service, metrics, host, port, httpInstances, eventThreads, indexerPeers, config,
        io.kvselect.server.security.HttpGuards.NONE, io.kvselect.server.cluster.ClusterView.standalone());
  }

  /** As above, with the HTTP verticles behind {@code guards} (request gate, bearer token, TLS). */
  public MainVerticle(SelectionService service, ServiceMetrics metrics, String host, int port, int httpInstances,
      int eventThreads, java.util.List<String> indexerPeers, java.util.Map<String, Object> config,
      io.kvselect.server.security.HttpGuards guards) {
    this(service, metrics, host, port, httpInstances, eventThreads, indexerPeers, config, guards,
        io.kvselect.server.cluster.ClusterView.standalone());
  }

  /** As above, on a node whose clustering {@code cluster} reports. */
  public MainVerticle(SelectionService service, ServiceMetrics metrics, String host, int port, int httpInstances,
      int eventThreads, java.util.List<String> indexerPeers, java.util.Map<String, Object> config,
      io.kvselect.server.security.HttpGuards guards, io.kvselect.server.cluster.ClusterView cluster) {
    this.guards = guards;
    this.cluster = cluster;
    this.config = config;
    this.eventThreads = eventThreads;
    this.indexerPeers = java.util.List.copyOf(indexerPeers);
    this.service = service;
    this.metrics = metrics;
    this.host = host;
    this.port = port;
    this.httpInstances = httpInstances;
  }

  /**
   * Deploys {@code n} instances of the event-bus API ({@link EventBusApi}) instead of as many as
   * HTTP instances; call before deployment. An {@code httpInstances} of 0 serves no HTTP at all.
   */
  /** Dynamo's replica sync behind {@code /replica_sync/*} (null: disabled); call before deployment. */
  public MainVerticle replicaSync(io.kvselect.server.sync.replica.ReplicaSync r) {
    this.replica = r;
    return this;
  }

  public MainVerticle busInstances(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("busInstances must be at least 1, got " + n);
    }
    this.busInstances = n;
    return this;
  }

  @Override
  public Future<?> start() {
    metrics.bind(service);
    if (replica != null) {
      replica.bind(metrics.registry());
    }
    busEvents = BusEvents.install(vertx, context, service);
    // a capacity change that wakes a long router queue serves its first slice at once and the rest
    // on the worker pool, slice by slice: a continuation re-queued on an event loop would keep the
    // loop's task queue from ever emptying, which starves its timers and I/O for the whole backlog
    // (bin/kvselect-queueload wakeup measured a 950 ms stall that way for 10,000 parked requests)
    service.continueQueuesOn(task -> context.executeBlocking(() -> {
      task.run();
      return null;
    }, false).onFailure(e -> {
      if (e instanceof java.util.concurrent.RejectedExecutionException) {
        context.runOnContext(v -> task.run()); // the pool is closing: finish on the loop
      } else {
        LOG.warn("a router queue's drain failed", e);
      }
    }));
    timer = vertx.setPeriodic(HOUSEKEEPING_MS, id -> service.expire());
    HistorySampler history = new HistorySampler(service, java.time.Clock.systemUTC());
    metrics.history(history);
    historyTimer = vertx.setPeriodic(HistorySampler.PERIOD_MS, id -> history.sample());
    var cfg = service.settings().router();
    List<String> inert = RouterConfigLoader.knobsNotActedOn(cfg);
    if (!inert.isEmpty()) {
      LOG.warn("parsed but not acted on by this version (Dynamo behaviour differs): {}", String.join(", ", inert));
    }
    Future<?> ingest = Future.succeededFuture();
    if (cfg.useKvEvents() && cfg.overlapScoreCredit() > 0) {
      // the ingest verticle owns the ZMQ threads; its sink forwards to the coordinator built next
      AtomicReference<BatchSink> sink = new AtomicReference<>();
      KvEventIngestVerticle iv = new KvEventIngestVerticle(
          KvEventIngestOptions.defaults().withPollerThreads(eventThreads), new BatchSink() {
            @Override
            public void onBatch(WorkerRank rank, long seq, byte[] payload) {
              sink.get().onBatch(rank, seq, payload);
            }

            @Override
            public void onReset(WorkerRank rank, String reason) {
              sink.get().onReset(rank, reason);
            }
          });
      ingest = vertx.deployVerticle(iv).onSuccess(id -> {
        events = new KvEventsCoordinator(service, s -> {
          sink.set(s);
          return iv.ingest();
        });
        service.addCatalogListener(events);
        metrics.bindKvEvents(events);
        history.events(events);
        KvEventsCoordinator ev = events;
        watch = new RetryingListenerWatch(() -> service.listWorkers(null, null), ev::stats, ev::unreachableSince,
            System::nanoTime, RetryingListenerWatch.GRACE);
        watchTimer = vertx.setPeriodic(2_000, t -> watch.check());
      });
    }
    // recover the index from a peer before serving, so no worker's listener goes live first
    return ingest.compose(v -> indexerPeers.isEmpty()
        ? Future.succeededFuture(IndexRecovery.Outcome.disabled())
        : vertx.executeBlocking(() -> IndexRecovery.run(service, indexerPeers), false))
        .compose(outcome -> {
          recovery = outcome;
          KvEventsCoordinator ev = events;
          if (httpInstances == 0) {
            return Future.succeededFuture();
          }
          // with port 0 each instance binds a random port of its own and port() names one of them
          // (sharing one random port needs Vert.x's server sharing, which is keyed by the
          // requested port: a second bind of the chosen port failed with "Address already in use")
          return vertx.deployVerticle(() -> new HttpApiVerticle(service, metrics, ev, () -> recovery, host, port,
              actualPort::set, config, guards, cluster).replicaSync(replica)
              .listenerWarnings(this::listenerWarnings), new DeploymentOptions().setInstances(httpInstances));
        })
        .compose(v -> {
          ApiOperations ops = new ApiOperations(service, events);
          return vertx.deployVerticle(() -> new EventBusApi(ops),
              new DeploymentOptions().setInstances(busInstances > 0 ? busInstances : Math.max(1, httpInstances)));
        });
  }

  /** The publisher of {@code kvselect.events.*}, once started. */
  public BusEvents busEvents() {
    return busEvents;
  }

  /** Schedulable workers whose KV-event listener has been retrying past its grace (none in approximate mode). */
  public List<RetryingListenerWatch.Warning> listenerWarnings() {
    RetryingListenerWatch w = watch;
    return w == null ? List.of() : w.warnings();
  }

  /** The KV-event coordinator, or null in approximate mode. */
  public KvEventsCoordinator events() {
    return events;
  }

  @Override
  public Future<?> stop() {
    service.shutdown();
    if (busEvents != null) {
      busEvents.close();
    }
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    if (historyTimer >= 0) {
      vertx.cancelTimer(historyTimer);
    }
    if (watchTimer >= 0) {
      vertx.cancelTimer(watchTimer);
    }
    return Future.succeededFuture();
  }

  /** The port the HTTP server listens on (useful with port 0). */
  public int port() {
    return actualPort.get();
  }
}
