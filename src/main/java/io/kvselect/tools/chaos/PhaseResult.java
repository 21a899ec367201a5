package io.kvselect.tools.chaos;

import java.util.Map;

/**
 * One finished phase as the report prints it. {@code window} is null for a phase without a fault;
 * {@code skipped} is non-null (the reason) for a phase that did not run, and then the measures are
 * empty. Immutable.
 *
 * @param loadSecs seconds the client threads ran
 * @param failures operation -> outcome -> count of the calls that failed
 * @param turns answered turns that had a previous answered turn (the moves' denominator)
 * @param bindings the nodes' agreement on the bindings within 10 s after the fault was undone (at the end of a baseline),
 *     as {@link LifecycleLoad.Agreement#cell} prints it
 * @param activeAtStop active requests each node's {@code /loads} counted when the load stopped, e.g. {@code 0/2/0}
 * @param unsettled last outcome -> count of the post-load {@code DELETE}s of the bookings clients could not settle
 * @param leaked what {@code /loads} still counted after the drain, e.g. {@code 0} or {@code node2: 3}
 * @param denied last outcome -> count of the post-leak-check retries of DELETEs that had answered 404 for a booking
 * @param leakedAfterRetry what {@code /loads} still counted after those retries (null when there were none)
 * @param drainSecs seconds until every node's active count was 0 (or the bound)
 * @param catalog {@code equal} or what differed
 * @param fallbacks the summed {@code kvselect_cluster_fallbacks_total}, or {@code n/a}
 * @param members members each node's {@code /cluster} listed, e.g. {@code 3/3/3}
 * @param notes anything the runner observed (a restart's time to ready), may be empty
 * @param samples {@code op: outcome} -> the first error body of that kind, for the reader to see why
 */
record PhaseResult(
    String name,
    String fault,
    String skipped,
    double loadSecs,
    long lifecycles,
    Map<String, Map<String, Long>> failures,
    Latency latency,
    Latency window,
    long turns,
    long moves,
    String bindings,
    String activeAtStop,
    Map<String, Long> unsettled,
    String leaked,
    Map<String, Long> denied,
    String leakedAfterRetry,
    double drainSecs,
    String catalog,
    String fallbacks,
    String members,
    String notes,
    Map<String, String> samples) {

  static PhaseResult skipped(String name, String fault, String reason) {
    return new PhaseResult(
        name,
        fault,
        reason,
        0,
        0,
        Map.of(),
        Latency.NONE,
        null,
        0,
        0,
        "—",
        "—",
        Map.of(),
        "—",
        Map.of(),
        null,
        0,
        "—",
        "—",
        "—",
        "",
        Map.of());
  }

  /** {@code none}, or {@code 5 (200 x3, 404 x2)}. */
  String unsettledCell() {
    return outcomes(unsettled);
  }

  String deniedCell() {
    return outcomes(denied);
  }

  private static String outcomes(Map<String, Long> last) {
    long n = last.values().stream().mapToLong(Long::longValue).sum();
    if (n == 0) {
      return "none";
    }
    StringBuilder sb = new StringBuilder();
    last.forEach((k, v) -> sb.append(sb.isEmpty() ? "" : ", ").append(k).append(" x").append(v));
    return n + " (" + sb + ")";
  }

  double lifecyclesPerSec() {
    return loadSecs > 0 ? lifecycles / loadSecs : 0;
  }
}
