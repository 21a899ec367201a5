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

  private final ConcurrentHashMap<String, ConcurrentHashMap<String, LongAdder>> byOp =
      new ConcurrentHashMap<>();

  /** The first answer body of each {@code op: outcome}, cut at {@value #SAMPLE_CHARS} characters. */
  private final ConcurrentHashMap<String, String> firstBody = new ConcurrentHashMap<>();

  static final int SAMPLE_CHARS = 240;

  /** Counts one failed {@code op} with {@code outcome} (a status code or a label). */
  void fail(String op, String outcome) {
    fail(op, outcome, null);
  }

  /** {@link #fail(String, String)}, keeping {@code body} when it is the first of its kind. */
  void fail(String op, String outcome, String body) {
    byOp.computeIfAbsent(op, k -> new ConcurrentHashMap<>())
        .computeIfAbsent(outcome, k -> new LongAdder())
        .increment();
    if (body != null && !body.isBlank()) {
      String b = body.strip().replace('\n', ' ').replace('|', '/');
      firstBody.putIfAbsent(
          op + ": " + outcome,
          b.length() > SAMPLE_CHARS ? b.substring(0, SAMPLE_CHARS) + "..." : b);
    }
  }

  /** {@code op: outcome} -> the first answer body seen, sorted. */
  Map<String, String> samples() {
    return new TreeMap<>(firstBody);
  }

  /** Operation -> outcome -> count, both sorted. */
  Map<String, Map<String, Long>> snapshot() {
    Map<String, Map<String, Long>> out = new TreeMap<>();
    byOp.forEach(
        (op, m) -> {
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
        .map(
            e ->
                e.getKey()
                    + ": "
                    + e.getValue().entrySet().stream()
                        .map(c -> c.getKey() + " x" + c.getValue())
                        .collect(Collectors.joining(", ")))
        .collect(Collectors.joining("; "));
  }

  /** The total of one outcome over every operation. */
  static long total(Map<String, Map<String, Long>> counts, String outcome) {
    return counts.values().stream().mapToLong(m -> m.getOrDefault(outcome, 0L)).sum();
  }
}
