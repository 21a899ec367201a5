package io.kvselect.server.metrics;

import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.events.RankStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The node's Micrometer registry (Prometheus format) and kvselect's own meters: selections and
 * reservation operations by outcome, request latency per route, and gauges of the service state.
 * Meters are looked up once per (name, tags) and cached; safe from any thread.
 */
public final class ServiceMetrics {

  private final PrometheusMeterRegistry registry;
  private final ConcurrentMap<String, Counter> counters = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Timer> timers = new ConcurrentHashMap<>();
  private final java.util.Set<String> queueGauges = ConcurrentHashMap.newKeySet();
  private final Map<String, MultiGauge> rankGauges = new ConcurrentHashMap<>();
  private volatile KvEventsCoordinator events;
  private volatile HistorySampler history;

  public ServiceMetrics() {
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Registers gauges that read the service state at scrape time. */
  public void bind(SelectionService service) {
    Gauge.builder("kvselect_index_blocks", service, s -> s.inspection().indexSize())
        .description("Indexed (rank, tier, block) entries over all partitions")
        .register(registry);
    Gauge.builder("kvselect_active_reservations", service, SelectionService::bookingCount)
        .description("Live reservations")
        .register(registry);
    Gauge.builder("kvselect_pending_selections", service, SelectionService::pendingSelections)
        .description("Cached selections awaiting a replayed reservation")
        .register(registry);
    Gauge.builder("kvselect_schedulable_workers", service, s -> s.ready().schedulableWorkers())
        .description("Workers in the schedulable lifecycle")
        .register(registry);
    bindKvc(service.kvcMetrics());
    service.addQueueObserver(
        (partition, cls, waitedNanos, outcome) -> {
          queueDepthGauge(service, partition, cls);
          timers
              .computeIfAbsent(
                  "queue " + partition + ' ' + cls + ' ' + outcome,
                  k ->
                      Timer.builder("kvselect_router_queue_wait")
                          .description(
                              "Time requests spent in the router queue, by how they left it")
                          .tag("partition", partition)
                          .tag("policy_class", cls)
                          .tag("outcome", outcome)
                          .publishPercentileHistogram()
                          .register(registry))
              .record(waitedNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        });
  }

  /** Counts a selection ({@code select}, {@code select_and_reserve}) by outcome (HTTP status class). */
  public void selection(String kind, int status) {
    count("kvselect_selections_total", "kind", kind, status);
  }

  /** As {@link #selection(String, int)}, answered after {@code nanos}: also feeds the {@link #history}. */
  public void selection(String kind, int status, long nanos) {
    selection(kind, status);
    HistorySampler h = history;
    if (h != null) {
      h.selection(status, nanos);
    }
  }

  /** The status page's history of this node, once {@link #history(HistorySampler)} set it; else null. */
  public HistorySampler history() {
    return history;
  }

  /** Sets the sampler that selections feed (MainVerticle does at start). */
  public void history(HistorySampler h) {
    this.history = h;
  }

  /** Counts a reservation operation ({@code reserve}, {@code prefill_complete}, ...) by outcome. */
  public void reservation(String op, int status) {
    count("kvselect_reservation_ops_total", "op", op, status);
  }

  private void count(String name, String tag, String value, int status) {
    String outcome = outcome(status);
    counters
        .computeIfAbsent(
            name + '|' + value + '|' + outcome,
            k ->
                Counter.builder(name)
                    .description(DESCRIPTIONS.get(name))
                    .tag(tag, value)
                    .tag("outcome", outcome)
                    .register(registry))
        .increment();
  }

  private static final Map<String, String> DESCRIPTIONS =
      Map.of(
          "kvselect_selections_total",
              "Selections answered (/select, /select_and_reserve), by kind and outcome"
                  + " (ok, not_found, conflict, overloaded, unavailable, rejected, error)",
          "kvselect_reservation_ops_total",
              "Reservation operations answered (reserve, prefill_complete, output_block,"
                  + " free), by op and outcome");

  private static String outcome(int status) {
    if (status < 400) {
      return "ok";
    }
    return switch (status) {
      case 404 -> "not_found";
      case 409 -> "conflict";
      case 429 -> "overloaded";
      case 503 -> "unavailable";
      default -> status < 500 ? "rejected" : "error";
    };
  }

  /** Records a request's latency under its route template. */
  public void request(String route, String method, long nanos) {
    timers
        .computeIfAbsent(
            method + ' ' + route,
            k ->
                Timer.builder("kvselect_http_request")
                    .description("HTTP request latency by route")
                    .tag("route", route)
                    .tag("method", method)
                    .publishPercentileHistogram()
                    .register(registry))
        .record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /**
   * Exposes KV-event ingestion: blocks applied, and per (worker, rank) listener counters and
   * state, refreshed at every scrape.
   */
  /** Registers (once) the depth gauge of one partition's policy class. */
  private void queueDepthGauge(SelectionService service, String partition, String cls) {
    String key = partition + "/" + cls;
    if (queueGauges.add(key)) {
      Gauge.builder(
              "kvselect_router_queue_depth",
              service,
              s -> s.inspection().queueDepths().getOrDefault(key, 0))
          .description("Requests waiting in the router queue")
          .tag("partition", partition)
          .tag("policy_class", cls)
          .register(registry);
    }
  }

  /** KVC-Router counters: requests by mode, rejects by reason, migrations, blacklist entries. */
  private void bindKvc(io.kvselect.core.kvc.KvcMetrics k) {
    for (io.kvselect.core.kvc.KvcMode m : io.kvselect.core.kvc.KvcMode.values()) {
      FunctionCounter.builder("kvselect_kvc_requests", k, x -> x.requests(m))
          .tag("mode", m.wire())
          .description("Requests dispatched by the kvc policy, by mode")
          .register(registry);
    }
    for (String r :
        List.of(
            io.kvselect.core.kvc.AdmitDecision.LARGE_APPEND,
            io.kvselect.core.kvc.AdmitDecision.NO_CAPACITY,
            io.kvselect.core.kvc.AdmitDecision.NOT_RESIDENT_NO_CAPACITY,
            io.kvselect.core.kvc.AdmitDecision.TIMEOUT,
            io.kvselect.core.kvc.AdmitDecision.RPC_ERROR)) {
      FunctionCounter.builder("kvselect_kvc_rejects", k, x -> x.rejects().getOrDefault(r, 0L))
          .tag("reason", r)
          .description("Admission rejects of the kvc policy, by reason")
          .register(registry);
    }
    FunctionCounter.builder(
            "kvselect_kvc_rejects_all", k, io.kvselect.core.kvc.KvcMetrics::rejectsTotal)
        .description(
            "Admission rejects of the kvc policy, every reason (workers may answer others)")
        .register(registry);
    FunctionCounter.builder(
            "kvselect_kvc_migrations", k, io.kvselect.core.kvc.KvcMetrics::migrations)
        .description("Sessions moved to another decode worker by an admission")
        .register(registry);
    FunctionCounter.builder(
            "kvselect_kvc_blacklist_entries", k, io.kvselect.core.kvc.KvcMetrics::blacklistEntries)
        .description("(session, decode worker) reject counters that reached tau_reject")
        .register(registry);
  }

  /**
   * The clustered session table's fallbacks: {@code kvselect_cluster_fallbacks_total{op}} (a
   * request that decided locally because the shared table did not answer within the call
   * budget), {@code kvselect_cluster_write_backs_total} and
   * {@code kvselect_cluster_write_back_conflicts_total} (a local binding the table had already
   * decided otherwise), and the gauge {@code kvselect_cluster_unconfirmed_bindings}.
   */
  /**
   * The cluster's own meters (clustered nodes): members seen, node-to-node sync gaps and
   * malformed messages, peers and bookings released after a member left, deferred frees and the
   * pause fence. {@code members} reads the local member list (no remote call).
   */
  public void bindCluster(
      io.kvselect.server.cluster.PeerSync sync, java.util.function.IntSupplier members) {
    // strongly held: the supplier is a lambda nothing else references (a weakly held gauge reads
    // NaN once collected)
    Gauge.builder("kvselect_cluster_members", members, m -> m.getAsInt())
        .strongReference(true)
        .description("cluster members this node sees, itself included")
        .register(registry);
    io.kvselect.server.cluster.PeerSyncStats st = sync.stats();
    FunctionCounter.builder("kvselect_cluster_sync_gaps", st, x -> x.gaps.get())
        .description("sync-stream gaps skipped after the gap timeout (a digest repairs them)")
        .register(registry);
    FunctionCounter.builder(
            "kvselect_cluster_sync_malformed", st, x -> x.malformed.get() + x.unknownVersion.get())
        .description("sync messages dropped as malformed or of an unknown version")
        .register(registry);
    FunctionCounter.builder("kvselect_cluster_peers_released", st, x -> x.peersReleased.get())
        .description("peers whose bookings this node released after they left the membership")
        .register(registry);
    FunctionCounter.builder("kvselect_cluster_bookings_released", st, x -> x.bookingsReleased.get())
        .description("bookings of departed peers this node stopped counting")
        .register(registry);
    Gauge.builder(
            "kvselect_cluster_deferred_frees_pending", sync, x -> x.deferredFrees().get("pending"))
        .strongReference(true)
        .description("frees kept for a node that could not be reached, not yet delivered")
        .register(registry);
    FunctionCounter.builder(
            "kvselect_cluster_deferred_frees_delivered",
            sync,
            x -> x.deferredFrees().get("delivered"))
        .description("kept frees delivered to the node that held the booking, which freed it")
        .register(registry);
    Gauge.builder("kvselect_cluster_fenced", sync, x -> x.fenceReason() == null ? 0 : 1)
        .strongReference(true)
        .description(
            "1 while this node refuses new selections after a pause longer than the failure timeout")
        .register(registry);
  }

  /** {@code kvselect_cluster_fallbacks_total{op="kvc_state"}}: KVC-Router state calls decided locally. */
  public void bindKvcFallbacks(io.kvselect.core.kvc.BudgetedKvcState k) {
    FunctionCounter.builder(
            "kvselect_cluster_fallbacks", k, io.kvselect.core.kvc.BudgetedKvcState::fallbacks)
        .tag("op", "kvc_state")
        .description(
            "requests that decided locally because the session table did not answer within the call budget")
        .register(registry);
  }

  public void bindFallbacks(io.kvselect.core.session.BudgetedSessionAffinity b) {
    FunctionCounter.builder("kvselect_cluster_fallbacks", b, x -> x.stats().lookupFallbacks())
        .tag("op", "session_lookup")
        .description(
            "requests that decided locally because the session table did not answer within the call budget")
        .register(registry);
    FunctionCounter.builder("kvselect_cluster_fallbacks", b, x -> x.stats().bindFallbacks())
        .tag("op", "session_bind")
        .description(
            "requests that decided locally because the session table did not answer within the call budget")
        .register(registry);
    FunctionCounter.builder("kvselect_cluster_fallbacks", b, x -> x.stats().releaseFallbacks())
        .tag("op", "session_release")
        .description(
            "requests that decided locally because the session table did not answer within the call budget")
        .register(registry);
    FunctionCounter.builder("kvselect_cluster_write_backs", b, x -> x.stats().writeBacks())
        .description("local session bindings the session table has answered for since")
        .register(registry);
    FunctionCounter.builder(
            "kvselect_cluster_write_back_conflicts", b, x -> x.stats().writeBackConflicts())
        .description(
            "local session bindings the session table had already bound elsewhere (the table's binding won)")
        .register(registry);
    Gauge.builder("kvselect_cluster_unconfirmed_bindings", b, x -> x.stats().unconfirmed())
        .description("local session bindings not yet written to the session table")
        .register(registry);
  }

  public void bindKvEvents(KvEventsCoordinator events) {
    this.events = events;
    FunctionCounter.builder(
            "kvselect_kv_event_blocks_applied", events, KvEventsCoordinator::appliedBlocks)
        .description("Blocks stored or removed from engine KV events")
        .register(registry);
    FunctionCounter.builder(
            "kvselect_kv_event_batches_applied", events, KvEventsCoordinator::batches)
        .description("KV-event batches decoded and applied")
        .register(registry);
    for (String stat : RANK_STATS) {
      rankGauges.put(
          stat,
          MultiGauge.builder("kvselect_kv_events_" + stat)
              .description("Per-rank KV-event listener counter: " + stat)
              .register(registry));
    }
  }

  /**
   * Per-rank gauges: counters, {@code live} (1 while delivering live batches) and {@code retrying}
   * (1 while the listener is not connected and trying again: a host that does not resolve yet, a
   * refused or lost connection; the reason is {@code last_error} in {@code GET /workers}).
   */
  private static final List<String> RANK_STATS =
      List.of(
          "last_seq",
          "batches",
          "gaps",
          "replays",
          "resets",
          "dropped_frames",
          "malformed_payloads",
          "live",
          "retrying",
          "connect_retries");

  private void refreshRankGauges() {
    KvEventsCoordinator ev = events;
    if (ev == null) {
      return;
    }
    Map<String, List<MultiGauge.Row<?>>> rows = new HashMap<>();
    for (var e : ev.stats().entrySet()) {
      WorkerRank r = e.getKey();
      RankStats st = e.getValue();
      Tags tags =
          Tags.of(
              "worker_id",
              Long.toUnsignedString(r.workerId()),
              "dp_rank",
              Integer.toString(r.dpRank()));
      double[] values = {
        st.lastSeq(),
        st.batches(),
        st.gaps(),
        st.replays(),
        st.resets(),
        st.droppedFrames(),
        ev.malformedPayloads(r),
        st.state() == RankStats.State.LIVE ? 1 : 0,
        st.state() == RankStats.State.RETRYING ? 1 : 0,
        st.retries()
      };
      for (int i = 0; i < RANK_STATS.size(); i++) {
        rows.computeIfAbsent(RANK_STATS.get(i), k -> new ArrayList<>())
            .add(MultiGauge.Row.of(tags, values[i]));
      }
    }
    for (String stat : RANK_STATS) {
      rankGauges.get(stat).register(rows.getOrDefault(stat, List.of()), true);
    }
  }

  public String scrape() {
    refreshRankGauges();
    return registry.scrape();
  }
}
