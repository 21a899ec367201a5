package io.kvselect.server.events;

import java.util.ArrayList;
import java.util.List;

/**
 * What one replay of {@code [from, to)} recovered.
 *
 * <p>{@code complete} means every sequence number of the range arrived, in order; {@code deliverable}
 * is then the whole range. Otherwise {@code reason} names the first problem (as Dynamo does:
 * empty, started after the requested seq, non-contiguous, ended before the target, each possibly
 * with the stop cause such as a timeout) and {@code deliverable} is the longest run that ends at
 * {@code to - 1} without a hole: after the reset, only batches with nothing missing between them
 * and the live batch are worth applying.
 */
record ReplayOutcome(boolean complete, String reason, List<Batch> deliverable) {

  /**
   * @param received batches read in arrival order, already limited to {@code [from, to)}
   * @param stopCause why reading stopped early ({@code "timeout"}, ...), or null after the end
   *     marker or once {@code to - 1} arrived
   */
  static ReplayOutcome evaluate(long from, long to, List<Batch> received, String stopCause) {
    List<Batch> ordered = new ArrayList<>(received.size());
    for (Batch b : received) {
      if (ordered.isEmpty() || b.seq() > ordered.get(ordered.size() - 1).seq()) {
        ordered.add(b);
      }
    }
    String range = "[" + from + ", " + to + ")";
    String suffix = stopCause == null ? "" : " (" + stopCause + ")";
    if (ordered.isEmpty()) {
      return new ReplayOutcome(
          false, "replay of " + range + " returned nothing" + suffix, List.of());
    }
    long first = ordered.get(0).seq();
    long last = ordered.get(ordered.size() - 1).seq();
    boolean contiguous = last - first + 1 == ordered.size();
    if (first == from && contiguous && last == to - 1) {
      return new ReplayOutcome(true, null, ordered);
    }
    String reason;
    if (first > from) {
      reason = "replay of " + range + " started after the requested seq, at " + first;
    } else if (!contiguous) {
      reason = "replay of " + range + " was not contiguous";
    } else {
      reason = "replay of " + range + " ended before the target, at " + last;
    }
    return new ReplayOutcome(false, reason + suffix, tailReaching(ordered, to - 1));
  }

  private static List<Batch> tailReaching(List<Batch> ordered, long target) {
    int end = ordered.size() - 1;
    if (ordered.get(end).seq() != target) {
      return List.of();
    }
    int start = end;
    while (start > 0 && ordered.get(start - 1).seq() == ordered.get(start).seq() - 1) {
      start--;
    }
    return List.copyOf(ordered.subList(start, end + 1));
  }
}
