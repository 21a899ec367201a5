package io.kvselect.tools.loadgen;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * CPU time per thread group over a measurement window: a poor man's profile that says whether the
 * node's ingest threads, the publishers or the ZMQ I/O threads used the cores. Threads are grouped
 * by name with every digit run replaced by {@code *} ({@code kvselect-zmq-1} ->
 * {@code kvselect-zmq-*}); JeroMQ's I/O and reaper threads, which every context names alike, are
 * told apart as the publishers' or the node's. Threads that end inside the window are not counted,
 * and the JVM's own GC and JIT threads are not Java threads and are missing. Confined to the thread
 * that takes the snapshots.
 */
final class ThreadCpu {

  private final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
  private final Map<Long, Long> start = new HashMap<>();
  private final Set<Long> publisherZmq;
  private long startNanos;

  /** {@code publisherZmq}: ids of the publishers' ZMQ threads. */
  ThreadCpu(Set<Long> publisherZmq) {
    this.publisherZmq = Set.copyOf(publisherZmq);
  }

  /** True for a JeroMQ I/O or reaper thread name. */
  static boolean isZmqThread(String name) {
    return name.startsWith("iothread-") || name.startsWith("reaper-");
  }

  /** Starts the window. */
  void begin() {
    start.clear();
    for (long id : mx.getAllThreadIds()) {
      long t = mx.getThreadCpuTime(id);
      if (t >= 0) {
        start.put(id, t);
      }
    }
    startNanos = System.nanoTime();
  }

  /** Ends the window: CPU seconds used per second of wall time (1.0 = one core), per group. */
  Map<String, Double> end() {
    double wall = (System.nanoTime() - startNanos) / 1e9;
    Map<String, Double> out = new TreeMap<>();
    for (long id : mx.getAllThreadIds()) {
      long t = mx.getThreadCpuTime(id);
      ThreadInfo info = mx.getThreadInfo(id);
      if (t < 0 || info == null) {
        continue;
      }
      long used = t - start.getOrDefault(id, 0L);
      String name = info.getThreadName();
      String group =
          name.replaceAll("\\d+", "*")
              + (isZmqThread(name) ? publisherZmq.contains(id) ? " (publishers)" : " (node)" : "");
      out.merge(group, used / 1e9 / wall, Double::sum);
    }
    return out;
  }
}
