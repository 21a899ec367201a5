package io.kvselect.server.epp;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The endpoint picker's meters on {@code /metrics}: decisions by status, the decision time (the
 * body's end of stream to the answer) and the render time, streams open, and the engines'
 * reported cache reuse against the overlap kvselect predicted (the error's histogram and a
 * counter of mispredictions by direction), so a drifting index shows at once. Thread-safe.
 */
public final class EppMetrics {

  /** An engine's {@code cached_tokens} figure. */
  public record Observed(long cachedTokens) {}

  private final MeterRegistry registry;
  private final ConcurrentHashMap<Integer, Counter> decisions = new ConcurrentHashMap<>();
  private final Timer decision;
  private final Timer render;
  private final DistributionSummary predictionError;
  private final Counter over;
  private final Counter under;
  private final Counter exact;
  private final AtomicLong open = new AtomicLong();

  public EppMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.decision =
        Timer.builder("kvselect_epp_decision")
            .description("ext_proc decision time, body end to answer")
            .publishPercentileHistogram()
            .register(registry);
    this.render =
        Timer.builder("kvselect_epp_render")
            .description("time spent rendering prompts to token ids")
            .publishPercentileHistogram()
            .register(registry);
    this.predictionError =
        DistributionSummary.builder("kvselect_epp_cached_tokens_error")
            .description("|observed cached_tokens - predicted overlap| per response")
            .baseUnit("tokens")
            .publishPercentileHistogram()
            .register(registry);
    this.over =
        Counter.builder("kvselect_epp_cached_tokens_mispredictions")
            .tag("direction", "over")
            .description("responses whose cached_tokens differed from the prediction")
            .register(registry);
    this.under =
        Counter.builder("kvselect_epp_cached_tokens_mispredictions")
            .tag("direction", "under")
            .description("responses whose cached_tokens differed from the prediction")
            .register(registry);
    this.exact =
        Counter.builder("kvselect_epp_cached_tokens_matches")
            .description("responses whose cached_tokens equalled the prediction")
            .register(registry);
    registry.gauge("kvselect_epp_streams_open", open);
  }

  /** A decision answered with {@code status} after {@code nanos}, {@code renderNanos} of it rendering. */
  public void decision(int status, long nanos, long renderNanos) {
    decisions
        .computeIfAbsent(
            status,
            s ->
                Counter.builder("kvselect_epp_decisions")
                    .tag("status", Integer.toString(s))
                    .register(registry))
        .increment();
    decision.record(nanos, TimeUnit.NANOSECONDS);
    if (renderNanos > 0) {
      render.record(renderNanos, TimeUnit.NANOSECONDS);
    }
  }

  /** An engine reported {@code observed} cached tokens where {@code predicted} were expected. */
  public void cachedTokens(long predicted, long observed) {
    predictionError.record(Math.abs(observed - predicted));
    if (observed > predicted) {
      under.increment();
    } else if (observed < predicted) {
      over.increment();
    } else {
      exact.increment();
    }
  }

  public void streamOpened() {
    open.incrementAndGet();
  }

  public void streamClosed() {
    open.decrementAndGet();
  }

  /**
   * What the status page shows of the picker: streams open, picks (decisions answered 200),
   * immediate responses by status, the mean decision time, and the engines' cached tokens against
   * the prediction (matches, over- and under-predictions, the mean absolute error). Immutable.
   */
  public record Summary(
      long streamsOpen,
      long picks,
      java.util.SortedMap<Integer, Long> immediate,
      double decisionMeanMillis,
      long matches,
      long over,
      long under,
      double meanErrorTokens) {}

  /** The figures now; counters read one by one, so two of them may straddle a decision. */
  public Summary summary() {
    java.util.TreeMap<Integer, Long> immediate = new java.util.TreeMap<>();
    decisions.forEach(
        (status, c) -> {
          if (status != 200) {
            immediate.put(status, (long) c.count());
          }
        });
    return new Summary(
        open.get(),
        decisions(200),
        java.util.Collections.unmodifiableSortedMap(immediate),
        decision.mean(TimeUnit.MILLISECONDS),
        (long) exact.count(),
        (long) over.count(),
        (long) under.count(),
        predictionError.count() == 0 ? 0 : predictionError.mean());
  }

  /** Decisions answered with {@code status} so far. */
  public long decisions(int status) {
    Counter c = decisions.get(status);
    return c == null ? 0 : (long) c.count();
  }
}
