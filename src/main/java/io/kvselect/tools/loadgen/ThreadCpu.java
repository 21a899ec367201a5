package io.kvselect.tools.loadgen;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time per thread group over a measurement window: a poor man's profile that says whether the
 * node's ingest threads, the publishers or the ZMQ I/O threads used the cores. Threads are grouped
 * by name with every digit run replaced by {@code *} ({@code kvselect-zmq-1} ->
 * {@code kvselect-zmq-*}). Threads that end inside the window are not counted. Confined to the
 * thread that takes the snapshots.
 */
final class ThreadCpu {

  private final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
  private final Map<Long, Long> start = new HashMap<>();
  private long startNanos;

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
      out.merge(info.getThreadName().replaceAll("\\d+", "*"), used / 1e9 / wall, Double::sum);
    }
    return out;
  }
}
