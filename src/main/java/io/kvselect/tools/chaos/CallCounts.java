package io.kvselect.tools.chaos;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * Failed calls of one phase by operation ({@code select}, {@code prefill}, {@code delete},
 * {@code cleanup}) and outcome: a non-2xx status code, {@code timeout} (no answer within the client
 * timeout) or {@code refused} / {@code io} (no HTTP answer at all). Thread-safe.
 */
final class CallCounts {

  /** The outcome label of a call that got no HTTP answer within the client timeout. */
  static final String TIMEOUT = "timeout";

  private final ConcurrentHashMap<String, ConcurrentHashMap<String, LongAdder>> byOp = new ConcurrentHashMap<>();

  /** Counts one failed {@code op} with {@code outcome} (a status code or a label). */
  void fail(String op, String outcome) {
    byOp.computeIfAbsent(op, k -> new ConcurrentHashMap<>()).computeIfAbsent(outcome, k -> new LongAdder())
        .increment();
  }

  /** Operation -> outcome -> count, both sorted. */
  Map<String, Map<String, Long>> snapshot() {
    Map<String, Map<String, Long>> out = new TreeMap<>();
    byOp.forEach((op, m) -> {
      Map<String, Long> counts = new TreeMap<>();
      m.forEach((k, v) -> counts.put(k, v.sum()));
      out.put(op, counts);
    });
    return out;
  }

  /** {@code select: 503 x2, timeout x1; delete: 404 x1}, or {@code none}. */
  static String format(Map<String, Map<String, Long>> counts) {
    if (counts.isEmpty()) {
      return "none";
    }
    return counts.entrySet().stream()
        .map(e -> e.getKey() + ": " + e.getValue().entrySet().stream()
            .map(c -> c.getKey() + " x" + c.getValue()).collect(Collectors.joining(", ")))
        .collect(Collectors.joining("; "));
  }

  /** The total of one outcome over every operation. */
  static long total(Map<String, Map<String, Long>> counts, String outcome) {
    return counts.values().stream().mapToLong(m -> m.getOrDefault(outcome, 0L)).sum();
  }
}
