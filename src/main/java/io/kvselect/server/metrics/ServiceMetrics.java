package io.kvselect.server.metrics;

import io.kvselect.core.service.SelectionService;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
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

  public ServiceMetrics() {
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Registers gauges that read the service state at scrape time. */
  public void bind(SelectionService service) {
    Gauge.builder("kvselect_index_blocks", service, s -> s.inspection().indexSize())
        .description("Indexed (rank, tier, block) entries over all partitions").register(registry);
    Gauge.builder("kvselect_active_reservations", service, SelectionService::bookingCount)
        .description("Live reservations").register(registry);
    Gauge.builder("kvselect_pending_selections", service, SelectionService::pendingSelections)
        .description("Cached selections awaiting a replayed reservation").register(registry);
    Gauge.builder("kvselect_schedulable_workers", service, s -> s.ready().schedulableWorkers())
        .description("Workers in the schedulable lifecycle").register(registry);
  }

  /** Counts a selection ({@code select}, {@code select_and_reserve}) by outcome (HTTP status class). */
  public void selection(String kind, int status) {
    count("kvselect_selections_total", "kind", kind, status);
  }

  /** Counts a reservation operation ({@code reserve}, {@code prefill_complete}, ...) by outcome. */
  public void reservation(String op, int status) {
    count("kvselect_reservation_ops_total", "op", op, status);
  }

  private void count(String name, String tag, String value, int status) {
    String outcome = outcome(status);
    counters.computeIfAbsent(name + '|' + value + '|' + outcome, k -> Counter.builder(name)
        .tag(tag, value).tag("outcome", outcome).register(registry)).increment();
  }

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
    timers.computeIfAbsent(method + ' ' + route, k -> Timer.builder("kvselect_http_request")
        .description("HTTP request latency by route").tag("route", route).tag("method", method)
        .publishPercentileHistogram().register(registry)).record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  public String scrape() {
    return registry.scrape();
  }
}
