package io.kvselect.core.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Table-driven order of each queue policy within one class. */
class QueueOrderTest {

  private static final long S = 1_000_000_000L;

  /** A row: label, enqueued seconds, priority jump seconds, strict priority, uncached tokens. */
  private record Req(String label, long enqueuedSecs, double jump, Long strict, long uncached) {
    QueuedRequest toRequest() {
      return new QueuedRequest(null, uncached + 10, uncached, jump, strict, enqueuedSecs * S);
    }
  }

  private static Req r(String label, long at, double jump, Long strict, long uncached) {
    return new Req(label, at, jump, strict, uncached);
  }

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(
            "fcfs",
            List.of(r("a", 1, 0, null, 5), r("b", 2, 0, null, 1), r("c", 3, 0, null, 3)),
            "abc"),
        Arguments.of(
            "fcfs",
            List.of(r("a", 1, 0, null, 0), r("b", 5, 4.5, null, 0), r("c", 3, 0, null, 0)),
            "bac"),
        Arguments.of(
            "fcfs",
            List.of(r("a", 1, 0, null, 0), r("b", 5, 4, null, 0), r("c", 3, 0, null, 0)),
            "abc"),
        Arguments.of(
            "fcfs",
            List.of(
                r("a", 1, 0, null, 0),
                r("b", 5, 0, 2L, 0),
                r("c", 3, 100, 1L, 0),
                r("d", 2, 0, 0L, 0)),
            "bcad"),
        Arguments.of(
            "fcfs",
            List.of(r("a", 2, 0, null, 0), r("b", 2, 0, null, 0), r("c", 2, 0, null, 0)),
            "abc"),
        Arguments.of(
            "lcfs",
            List.of(r("a", 1, 0, null, 0), r("b", 2, 0, null, 0), r("c", 3, 0, null, 0)),
            "cba"),
        Arguments.of(
            "lcfs",
            List.of(r("a", 1, 1.5, null, 0), r("b", 2, 0, null, 0), r("c", 3, 0, null, 0)),
            "cab"),
        Arguments.of(
            "lcfs",
            List.of(r("a", 1, 2.5, null, 0), r("b", 2, 0, null, 0), r("c", 3, 0, null, 0)),
            "acb"),
        Arguments.of(
            "lcfs",
            List.of(r("a", 1, 0, 1L, 0), r("b", 2, 0, null, 0), r("c", 3, 0, null, 0)),
            "acb"),
        Arguments.of(
            "lcfs",
            List.of(r("a", 2, 0, null, 0), r("b", 2, 0, null, 0), r("c", 2, 0, null, 0)),
            "cba"),
        Arguments.of(
            "wspt",
            List.of(r("a", 1, 0, null, 300), r("b", 2, 0, null, 100), r("c", 3, 0, null, 200)),
            "bca"),
        Arguments.of(
            "wspt",
            List.of(r("a", 3, 0, null, 100), r("b", 2, 0, null, 100), r("c", 1, 0, null, 100)),
            "cba"),
        Arguments.of(
            "wspt",
            List.of(r("a", 1, 0, null, 100), r("b", 2, 1, null, 300), r("c", 3, 0, null, 90)),
            "cab"),
        Arguments.of(
            "wspt",
            List.of(r("a", 1, 0, null, 100), r("b", 2, 4, null, 300), r("c", 3, 0, null, 90)),
            "bca"),
        Arguments.of(
            "wspt",
            List.of(r("a", 5, 0, null, 100), r("b", 2, 1, null, 200), r("c", 1, 0, null, 100)),
            "bca"),
        Arguments.of(
            "wspt",
            List.of(r("a", 1, 0, null, 1), r("b", 2, 0, 7L, 10_000), r("c", 3, 0, null, 0)),
            "bca"),
        Arguments.of(
            "wspt",
            List.of(r("a", 1, 0, null, 50), r("b", 2, 0, null, 50), r("c", 9, 8, null, 50)),
            "cab"));
  }

  @ParameterizedTest(name = "{0} {2}")
  @MethodSource("cases")
  void servesInPolicyOrder(String policy, List<Req> rows, String expected) {
    RouterQueue queue = new RouterQueue(QueueConfig.defaults(policy));
    List<QueuedRequest> requests = new ArrayList<>();
    for (Req row : rows) {
      QueuedRequest q = row.toRequest();
      requests.add(q);
      assertEquals(null, queue.offer(q, 1));
    }
    StringBuilder order = new StringBuilder();
    for (QueuedRequest served : queue.drain(x -> true)) {
      order.append(rows.get(requests.indexOf(served)).label());
    }
    assertEquals(expected, order.toString());
    assertEquals(0, queue.size());
  }

  @ParameterizedTest(name = "{0} {2}")
  @MethodSource("cases")
  void oneAtATimeGivesTheSameOrder(String policy, List<Req> rows, String expected) {
    RouterQueue queue = new RouterQueue(QueueConfig.defaults(policy));
    List<QueuedRequest> requests = new ArrayList<>();
    for (Req row : rows) {
      QueuedRequest q = row.toRequest();
      requests.add(q);
      queue.offer(q, 1);
    }
    StringBuilder order = new StringBuilder();
    while (queue.size() > 0) {
      int[] budget = {1};
      List<QueuedRequest> served = queue.drain(x -> budget[0]-- > 0);
      assertEquals(1, served.size());
      order.append(rows.get(requests.indexOf(served.get(0))).label());
    }
    assertEquals(expected, order.toString());
  }
}
