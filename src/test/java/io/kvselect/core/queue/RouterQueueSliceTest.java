package io.kvselect.core.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Serving a backlog in slices ({@link RouterQueue#drain(java.util.function.Predicate, int)}, as the
 * service does so that no event-loop task serves a whole queue) serves exactly the requests, in
 * exactly the order, of one unbounded drain: the deficit round robin's turn and deficits carry
 * over between slices.
 */
class RouterQueueSliceTest {

  private static RouterQueue queue(List<Integer> classesOfRequests, int quantumA, int quantumB) {
    RouterQueue q =
        new RouterQueue(
            new QueueConfig(
                "fcfs",
                List.of(
                    new QueueClass("a", quantumA, "fcfs", null, null),
                    new QueueClass("b", quantumB, "lcfs", null, null),
                    new QueueClass("c", 1, "wspt", null, null)),
                List.of()));
    long clock = 0;
    for (int c : classesOfRequests) {
      String cls = c == 0 ? "a" : c == 1 ? "b" : c == 2 ? "c" : null;
      q.offer(new QueuedRequest(cls, 10, (clock * 7919) % 97, 0, null, clock++), 1);
    }
    return q;
  }

  @Property(tries = 200)
  void slicesServeWhatOneDrainServesInTheSameOrder(
      @ForAll @Size(max = 300) List<@IntRange(min = 0, max = 3) Integer> classes,
      @ForAll @IntRange(min = 1, max = 4) int quantumA,
      @ForAll @IntRange(min = 1, max = 4) int quantumB,
      @ForAll @IntRange(min = 1, max = 70) int slice) {
    List<QueuedRequest> whole = queue(classes, quantumA, quantumB).drain(r -> true);
    RouterQueue sliced = queue(classes, quantumA, quantumB);
    List<QueuedRequest> parts = new ArrayList<>();
    for (int guard = 0; guard <= classes.size(); guard++) {
      List<QueuedRequest> got = sliced.drain(r -> true, slice);
      parts.addAll(got);
      if (got.size() < slice) {
        break;
      }
    }
    assertEquals(classes.size(), whole.size());
    assertEquals(0, sliced.size());
    assertEquals(
        whole.stream().map(QueuedRequest::enqueuedNanos).toList(),
        parts.stream().map(QueuedRequest::enqueuedNanos).toList());
  }
}
