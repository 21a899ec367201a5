package io.kvselect.server;

import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.api.ApiOperations;
import io.kvselect.server.api.HttpApiVerticle;
import io.kvselect.server.bus.BusEvents;
import io.kvselect.server.bus.EventBusApi;
import io.kvselect.server.cluster.ClusterView;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.config.OperationsSettings;
import io.kvselect.server.epp.EppMetrics;
import io.kvselect.server.epp.EppVerticle;
import io.kvselect.server.events.IndexShardVerticle;
import io.kvselect.server.events.KvEventIngestOptions;
import io.kvselect.server.events.KvEventIngestVerticle;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.events.ShardWriters;
import io.kvselect.server.liveness.RetryingListenerWatch;
import io.kvselect.server.metrics.HistorySampler;
import io.kvselect.server.metrics.ServiceMetrics;
import io.kvselect.server.security.HttpGuards;
import io.kvselect.server.session.BusSessionAffinity;
import io.kvselect.server.session.SessionAffinityVerticle;
import io.kvselect.server.sync.IndexRecovery;
import io.kvselect.server.sync.replica.ReplicaSync;
import io.kvselect.server.sync.replica.ReplicaSyncVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The root verticle of a node and the only place that deploys its verticles (as its children, so
 * undeploying it stops them all): session affinity (the owner of the session table, when the
 * service calls it over the bus), Dynamo's replica sync (with {@code --replica-sync-port}), KV-event
 * ingestion and one indexing-shard verticle per ingest poller (when the index is event-driven), the HTTP
 * adapter instances, the event-bus API ({@link EventBusApi}, with the {@link BusEvents}
 * publisher) over the node's shared {@link SelectionService}, and the workers-file and liveness
 * watchers when {@link OperationsSettings} switches them on, and the endpoint picker
 * ({@link EppVerticle}, Envoy {@code ext_proc}) with {@code --epp-port}. It runs the periodic housekeeping
 * (request expiry, TTL indexes, idle session bindings) and the status page's history sampler
 * ({@link HistorySampler}). Built by {@link NodeAssembly} from the node's {@link NodeParts}.
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

  private final List<String> indexerPeers;

  /** The workers file and the liveness watch, deployed as verticles of this one when switched on. */
  private final OperationsSettings operations;

  /** The effective configuration served by {@code GET /config}; never modified. */
  private final java.util.Map<String, Object> config;

  private final HttpGuards guards;
  private volatile IndexRecovery.Outcome recovery = IndexRecovery.Outcome.disabled();

  /** Dynamo's replica sync behind {@code /replica_sync/*}; null when disabled. */
  private final ReplicaSync replica;

  private BusEvents busEvents;

  /** What {@code GET /cluster} and {@code /ready} report about clustering. */
  private final ClusterView cluster;

  /** The endpoint picker's settings; its verticle is deployed only when a port is set. */
  private final io.kvselect.server.config.EppSettings epp;

  private final AtomicInteger eppPort = new AtomicInteger(-1);

  /** The picker's meters (thread-safe), shared by its verticle and the status page; null when it is off. */
  private EppMetrics eppMetrics;

  /**
   * The root of a node built from {@code parts} as {@code s} describes it, with
   * {@code httpInstances} HTTP server instances (0: none, the event-bus API only) behind
   * {@code guards}, on a node whose clustering {@code cluster} reports.
   */
  public MainVerticle(
      NodeSettings s,
      NodeParts parts,
      ServiceMetrics metrics,
      int httpInstances,
      HttpGuards guards,
      ClusterView cluster) {
    this.guards = guards;
    this.cluster = cluster;
    this.config = s.configJson();
    this.eventThreads = s.threads();
    this.indexerPeers = List.copyOf(s.indexerPeers());
    this.operations = s.operations();
    this.service = parts.service();
    this.replica = parts.replica();
    this.metrics = metrics;
    this.host = s.host();
    this.port = s.port();
    this.httpInstances = httpInstances;
    this.epp = s.epp();
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
    service.continueQueuesOn(
        task ->
            context
                .executeBlocking(
                    () -> {
                      task.run();
                      return null;
                    },
                    false)
                .onFailure(
                    e -> {
                      if (e instanceof java.util.concurrent.RejectedExecutionException) {
                        context.runOnContext(
                            v -> task.run()); // the pool is closing: finish on the loop
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
      LOG.warn(
          "parsed but not acted on by this version (Dynamo behaviour differs): {}",
          String.join(", ", inert));
    }
    // the session table's owner, then Dynamo's replica sync: its PUB is bound (or the deployment
    // fails) before anything books
    Future<?> ingest =
        service.sessionAffinity() instanceof BusSessionAffinity bus
            ? vertx.deployVerticle(new SessionAffinityVerticle(bus.owned()))
            : Future.succeededFuture();
    if (replica != null) {
      ingest = ingest.compose(r -> vertx.deployVerticle(new ReplicaSyncVerticle(replica, service)));
    }
    if (cfg.index().useKvEvents() && cfg.cost().overlapScoreCredit() > 0) {
      // the ingest verticle owns the ZMQ threads; every subscription the coordinator opens names
      // its own sink, so the ingest's default one only logs stray deliveries
      // one indexing-shard verticle per poller: poller p decodes the batches of shard p's ranks and
      // hands them to shard p's verticle at the end of each poll round, which applies them
      int pollers = Math.max(1, eventThreads);
      ShardWriters shards = new ShardWriters(vertx, pollers, pollers);
      KvEventIngestVerticle iv =
          new KvEventIngestVerticle(
              KvEventIngestOptions.defaults().withPollerThreads(pollers),
              KvEventsCoordinator.UNSUBSCRIBED,
              shards::flush);
      DeploymentOptions shardOptions =
          new DeploymentOptions()
              .setThreadingModel(io.vertx.core.ThreadingModel.WORKER)
              .setWorkerPoolName("kvselect-index-shard")
              .setWorkerPoolSize(pollers);
      ingest =
          ingest
              .compose(
                  r -> {
                    Future<?> all = Future.succeededFuture();
                    for (int p = 0; p < pollers; p++) {
                      int shard = p;
                      all =
                          all.compose(
                              x ->
                                  vertx.deployVerticle(
                                      new IndexShardVerticle(shards, shard, service::eventIndex),
                                      shardOptions));
                    }
                    return all;
                  })
              .compose(r -> vertx.deployVerticle(iv))
              .onSuccess(
                  id -> {
                    events = new KvEventsCoordinator(service, iv.ingest(), shards);
                    service.addCatalogListener(events);
                    metrics.bindKvEvents(events);
                    history.events(events);
                    KvEventsCoordinator ev = events;
                    watch =
                        new RetryingListenerWatch(
                            () -> service.listWorkers(null, null),
                            ev::stats,
                            ev::unreachableSince,
                            System::nanoTime,
                            RetryingListenerWatch.GRACE);
                    watchTimer = vertx.setPeriodic(2_000, t -> watch.check());
                  });
    }
    // recover the index from a peer before serving, so no worker's listener goes live first
    return ingest
        .compose(
            v ->
                indexerPeers.isEmpty()
                    ? Future.succeededFuture(IndexRecovery.Outcome.disabled())
                    : vertx.executeBlocking(() -> IndexRecovery.run(service, indexerPeers), false))
        .compose(
            outcome -> {
              recovery = outcome;
              KvEventsCoordinator ev = events;
              if (httpInstances == 0) {
                return Future.succeededFuture();
              }
              // with port 0 each instance binds a random port of its own and port() names one of
              // them
              // (sharing one random port needs Vert.x's server sharing, which is keyed by the
              // requested port: a second bind of the chosen port failed with "Address already in
              // use")
              if (epp.enabled()) {
                eppMetrics = new EppMetrics(metrics.registry());
              }
              EppMetrics em = eppMetrics;
              return vertx.deployVerticle(
                  () ->
                      new HttpApiVerticle(
                              service,
                              metrics,
                              ev,
                              () -> recovery,
                              host,
                              port,
                              actualPort::set,
                              config,
                              guards,
                              cluster)
                          .replicaSync(replica)
                          .listenerWarnings(this::listenerWarnings)
                          .picker(em == null ? null : em::summary),
                  new DeploymentOptions().setInstances(httpInstances));
            })
        .compose(
            v -> {
              ApiOperations ops = new ApiOperations(service, events);
              return vertx.deployVerticle(
                  () -> new EventBusApi(ops),
                  new DeploymentOptions().setInstances(Math.max(1, httpInstances)));
            })
        .compose(v -> Operations.deploy(vertx, operations, service, events))
        .compose(
            v ->
                epp.enabled()
                    ? vertx.deployVerticle(
                        new EppVerticle(
                            service,
                            epp,
                            host,
                            () -> service.ready().ready() && cluster.notReadyReason() == null,
                            eppMetrics(),
                            eppPort::set))
                    : Future.succeededFuture());
  }

  /** The picker's meters, made with the HTTP servers (or here when no HTTP server runs). */
  private EppMetrics eppMetrics() {
    if (eppMetrics == null) {
      eppMetrics = new EppMetrics(metrics.registry());
    }
    return eppMetrics;
  }

  /** The endpoint picker's gRPC port, or -1 when it is off (useful with {@code --epp-port 0}). */
  public int eppPort() {
    return eppPort.get();
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
