package io.kvselect.server.sync.replica;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The replica-sync message counters, one per {@code direction topic outcome}. The key set is fixed
 * at construction; each counter is a {@link LongAdder}, incremented by the sync thread (inbound,
 * sent) and by publishing threads (dropped), read by any thread.
 */
final class ReplicaCounters {

  /** What can happen to a received message; the label {@code outcome} of the counter. */
  static final List<String> IN_OUTCOMES =
      List.of(
          "applied",
          "ignored",
          "own",
          "unknown_partition",
          "block_size_mismatch",
          "unregistered_worker",
          "legacy_tenant_id",
          "malformed",
          "stale");

  private final Map<String, LongAdder> counters;

  ReplicaCounters() {
    Map<String, LongAdder> c = new LinkedHashMap<>();
    for (String topic : List.of(ReplicaWire.SEQUENCE_TOPIC, ReplicaWire.AFFINITY_TOPIC)) {
      for (String outcome : IN_OUTCOMES) {
        c.put(key("in", topic, outcome), new LongAdder());
      }
      c.put(key("out", topic, "sent"), new LongAdder());
      c.put(key("out", topic, "dropped"), new LongAdder());
    }
    c.put(key("in", "other", "unknown_topic"), new LongAdder());
    c.put(key("in", "other", "malformed"), new LongAdder());
    counters = Map.copyOf(c);
  }

  private static String key(String direction, String topic, String outcome) {
    return direction + ' ' + topic + ' ' + outcome;
  }

  void inc(String direction, String topic, String outcome) {
    counters.get(key(direction, topic, outcome)).increment();
  }

  long count(String direction, String topic, String outcome) {
    LongAdder a = counters.get(key(direction, topic, outcome));
    return a == null ? 0 : a.sum();
  }

  /** Every nonzero counter as {@code direction topic outcome=n}, sorted, or {@code none}. */
  String text() {
    StringBuilder b = new StringBuilder();
    new TreeMap<>(counters)
        .forEach(
            (k, a) -> {
              if (a.sum() != 0) {
                b.append(b.length() == 0 ? "" : ", ").append(k).append('=').append(a.sum());
              }
            });
    return b.length() == 0 ? "none" : b.toString();
  }

  /** Registers {@code kvselect_replica_sync_events_total} with direction, topic and outcome tags. */
  void bind(MeterRegistry registry) {
    counters.forEach(
        (k, adder) -> {
          String[] parts = k.split(" ");
          FunctionCounter.builder("kvselect_replica_sync_events", adder, LongAdder::doubleValue)
              .description("Replica-sync messages by direction, topic and outcome")
              .tags("direction", parts[0], "topic", parts[1], "outcome", parts[2])
              .register(registry);
        });
  }
}
