package io.kvselect.core.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** DRR shares, limits, removal, timeouts and accounting of {@link RouterQueue}. */
class RouterQueueTest {

  private long clock;

  private QueuedRequest req(String cls, long isl, long uncached) {
    return new QueuedRequest(cls, isl, uncached, 0, null, clock++);
  }

  private static QueueConfig classes(QueueClass... cs) {
    return new QueueConfig("fcfs", List.of(cs), List.of());
  }

  private static Map<String, Integer> count(List<QueuedRequest> served) {
    Map<String, Integer> counts = new java.util.TreeMap<>();
    for (QueuedRequest r : served) {
      counts.merge(r.policyClass(), 1, Integer::sum);
    }
    return counts;
  }

  private RouterQueue backlog(int each) {
    RouterQueue q =
        new RouterQueue(
            classes(
                new QueueClass("a", 3, "fcfs", null, null),
                new QueueClass("b", 1, "fcfs", null, null)));
    for (int i = 0; i < each; i++) {
      assertNull(q.offer(req("a", 1, 1), 1));
      assertNull(q.offer(req("b", 1, 1), 1));
    }
    return q;
  }

  @Test
  void drrQuantaThreeToOneInOneDrain() {
    RouterQueue q = backlog(400);
    int[] budget = {400};
    List<QueuedRequest> served = q.drain(r -> budget[0]-- > 0);
    assertEquals(400, served.size());
    assertEquals(Map.of("a", 300, "b", 100), count(served));
    assertEquals(
        List.of("a", "a", "a", "b", "a", "a", "a", "b"),
        served.subList(0, 8).stream().map(QueuedRequest::policyClass).toList());
    assertEquals(Map.of("a", 100, "b", 300, "default", 0), q.depthByClass());
  }

  @Test
  void drrQuantaThreeToOneOneRequestPerDrain() {
    RouterQueue q = backlog(400);
    List<QueuedRequest> served = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      int[] budget = {1};
      List<QueuedRequest> got = q.drain(r -> budget[0]-- > 0);
      assertEquals(1, got.size());
      served.addAll(got);
    }
    assertEquals(Map.of("a", 300, "b", 100), count(served));
  }

  @Test
  void emptyClassLosesItsTurnAndOthersTakeAll() {
    RouterQueue q = backlog(2);
    List<QueuedRequest> served = q.drain(r -> true);
    assertEquals(
        List.of("a", "a", "b", "b"), served.stream().map(QueuedRequest::policyClass).toList());
    assertEquals(0, q.size());
    assertEquals(List.of(), q.drain(r -> true));
  }

  @Test
  void blockedClassDoesNotStopOtherClasses() {
    RouterQueue q = backlog(5);
    List<QueuedRequest> served = q.drain(r -> r.policyClass().equals("b"));
    assertEquals(5, served.size());
    assertEquals(Map.of("b", 5), count(served));
    assertEquals(Map.of("a", 5, "b", 0, "default", 0), q.depthByClass());
    List<QueuedRequest> rest = q.drain(r -> true);
    assertEquals(Map.of("a", 5), count(rest));
  }

  @Test
  void borrowingRotatesAmongClassesWhileTheTurnHolderIsBlocked() {
    RouterQueue q =
        new RouterQueue(
            classes(
                new QueueClass("a", 1, "fcfs", null, null),
                new QueueClass("b", 1, "fcfs", null, null),
                new QueueClass("c", 1, "fcfs", null, null)));
    for (int i = 0; i < 3; i++) {
      q.offer(req("a", 1, 1), 1);
      q.offer(req("b", 1, 1), 1);
      q.offer(req("c", 1, 1), 1);
    }
    List<QueuedRequest> served = q.drain(r -> !r.policyClass().equals("a"));
    assertEquals(
        List.of("b", "c", "b", "c", "b", "c"),
        served.stream().map(QueuedRequest::policyClass).toList());
  }

  @Test
  void refusedHeadIsTestedOncePerClassPerDrain() {
    RouterQueue q = backlog(3);
    int[] calls = {0};
    assertEquals(
        List.of(),
        q.drain(
            r -> {
              calls[0]++;
              return false;
            }));
    assertEquals(2, calls[0]);
    assertEquals(6, q.size());
  }

  @Test
  void blockedTurnHolderResumesItsTurnNextDrain() {
    RouterQueue q = backlog(10);
    int[] budget = {2};
    List<QueuedRequest> first = q.drain(r -> budget[0]-- > 0);
    assertEquals(List.of("a", "a"), first.stream().map(QueuedRequest::policyClass).toList());
    List<QueuedRequest> next = q.drain(r -> true).subList(0, 5);
    assertEquals(
        List.of("a", "b", "a", "a", "a"), next.stream().map(QueuedRequest::policyClass).toList());
  }

  @Test
  void requestLimitRejectsWithExactDetails() {
    RouterQueue q = new RouterQueue(classes(new QueueClass("batch", 1, "fcfs", null, 2)));
    assertNull(q.offer(req("batch", 5, 5), 2));
    assertNull(q.offer(req("batch", 5, 5), 2));
    assertNull(q.offer(req("batch", 5, 5), 2));
    assertNull(q.offer(req("batch", 5, 5), 2));
    QueuedRequest fifth = req("batch", 5, 5);
    assertEquals(new QueueRejection("batch", "requests", 4, 4), q.offer(fifth, 2));
    assertFalse(q.contains(fifth));
    assertEquals(4, q.size());
    assertEquals(20, q.pendingIslTokens());
    assertNull(q.offer(fifth, 3));
    assertEquals(new QueueRejection("batch", "requests", 5, 0), q.offer(req("batch", 1, 1), 0));
  }

  @Test
  void zeroLimitPerWorkerRejectsLikeDynamo() {
    RouterQueue q = new RouterQueue(classes(new QueueClass("never", 1, "fcfs", null, 0)));
    assertEquals(new QueueRejection("never", "requests", 0, 0), q.offer(req("never", 10, 10), 4));
    assertEquals(0, q.size());
    assertEquals(Map.of("never", 0, "default", 0), q.depthByClass());
  }

  @Test
  void unknownAndMissingClassUseTheDefaultClass() {
    RouterQueue q =
        new RouterQueue(
            classes(
                new QueueClass("default", 1, "fcfs", null, 1),
                new QueueClass("x", 1, "fcfs", null, null)));
    assertNull(q.offer(req(null, 1, 1), 1));
    assertEquals(new QueueRejection("default", "requests", 1, 1), q.offer(req("nope", 1, 1), 1));
    assertEquals("default", q.classOf(req("nope", 1, 1)).name());
    assertEquals("x", q.classOf(req("x", 1, 1)).name());
  }

  @Test
  void islTierCapsPendingTokens() {
    QueueConfig config =
        new QueueConfig("fcfs", List.of(), List.of(new IslTier(1000, 1), new IslTier(0, 100)));
    RouterQueue q = new RouterQueue(config);
    assertNull(q.offer(req(null, 150, 150), 2));
    assertNull(q.offer(req(null, 50, 10), 2));
    assertEquals(200, q.pendingIslTokens());
    assertEquals(
        new QueueRejection("default", "isl_tokens", 200, 200), q.offer(req(null, 1, 0), 2));
    assertEquals(
        new QueueRejection("default", "isl_tokens", 200, 3), q.offer(req(null, 1, 1000), 3));
    assertNull(q.offer(req(null, 100, 999), 3));
    assertEquals(300, q.pendingIslTokens());
  }

  @Test
  void noMatchingTierMeansNoCap() {
    RouterQueue q =
        new RouterQueue(new QueueConfig("fcfs", List.of(), List.of(new IslTier(100, 0))));
    assertNull(q.offer(req(null, 5000, 99), 1));
    assertEquals(
        new QueueRejection("default", "isl_tokens", 5000, 0), q.offer(req(null, 0, 100), 1));
  }

  @Test
  void requestLimitIsCheckedBeforeIslTier() {
    QueueConfig config =
        new QueueConfig(
            "fcfs",
            List.of(new QueueClass("default", 1, "fcfs", null, 0)),
            List.of(new IslTier(0, 0)));
    assertEquals("requests", new RouterQueue(config).offer(req(null, 1, 1), 1).limitKind());
  }

  @Test
  void removeAndTimeoutsUpdateAccounting() {
    RouterQueue q = backlog(0);
    QueuedRequest a1 = new QueuedRequest("a", 10, 1, 0, null, 100);
    QueuedRequest b1 = new QueuedRequest("b", 20, 1, 0, null, 50);
    QueuedRequest a2 = new QueuedRequest("a", 30, 1, 0, null, 200);
    QueuedRequest a3 = new QueuedRequest("a", 40, 1, 5, null, 100);
    q.offer(a1, 1);
    q.offer(b1, 1);
    q.offer(a2, 1);
    q.offer(a3, 1);
    assertEquals(100, q.pendingIslTokens());
    assertTrue(q.remove(a2));
    assertFalse(q.remove(a2));
    assertEquals(70, q.pendingIslTokens());
    assertEquals(Map.of("a", 2, "b", 1, "default", 0), q.depthByClass());
    assertEquals(List.of(b1), q.removeEnqueuedBefore(100));
    List<QueuedRequest> timedOut = q.removeEnqueuedBefore(101);
    assertEquals(2, timedOut.size());
    assertSame(a1, timedOut.get(0));
    assertSame(a3, timedOut.get(1));
    assertEquals(0, q.size());
    assertEquals(0, q.pendingIslTokens());
    assertEquals(List.of(), q.drain(r -> true));
  }

  @Test
  void duplicateOfferAndNegativeWorkersAreRejected() {
    RouterQueue q = backlog(0);
    QueuedRequest r = req("a", 1, 1);
    q.offer(r, 1);
    assertThrows(IllegalArgumentException.class, () -> q.offer(r, 1));
    assertThrows(IllegalArgumentException.class, () -> q.offer(req("a", 1, 1), -1));
    assertEquals(1, q.size());
    assertEquals(1, q.pendingIslTokens());
  }

  @Test
  void timeoutRejectionCarriesMillis() {
    assertEquals(
        new QueueRejection("c", "timeout", 1500, 1000), QueueRejection.timeout("c", 1500, 1000));
  }

  @Test
  void requestValidation() {
    assertThrows(IllegalArgumentException.class, () -> new QueuedRequest(null, -1, 0, 0, null, 0));
    assertThrows(IllegalArgumentException.class, () -> new QueuedRequest(null, 0, -1, 0, null, 0));
    assertThrows(
        IllegalArgumentException.class, () -> new QueuedRequest(null, 0, 0, -0.5, null, 0));
    assertThrows(
        IllegalArgumentException.class, () -> new QueuedRequest(null, 0, 0, Double.NaN, null, 0));
    assertThrows(
        IllegalArgumentException.class,
        () -> new QueuedRequest(null, 0, 0, Double.POSITIVE_INFINITY, null, 0));
    QueuedRequest r = new QueuedRequest("x", 7, 3, 1.5, 9L, 42);
    assertEquals("x", r.policyClass());
    assertEquals(7, r.islTokens());
    assertEquals(3, r.uncachedPrefillTokens());
    assertEquals(1.5, r.priorityJumpSecs());
    assertEquals(9L, r.strictPriority());
    assertEquals(42, r.enqueuedNanos());
    assertEquals(42 - 1_500_000_000L, r.fcfsKey());
    assertEquals(-42 - 1_500_000_000L, r.lcfsKey());
    assertEquals(1.2, r.wsptKey(), 1e-12);
  }

  @Test
  void keysSaturateAtExtremeClocks() {
    QueuedRequest low = new QueuedRequest(null, 0, 0, 1e12, null, Long.MIN_VALUE + 5);
    assertEquals(Long.MIN_VALUE, low.fcfsKey());
    QueuedRequest min = new QueuedRequest(null, 0, 0, 0, null, Long.MIN_VALUE);
    assertEquals(Long.MAX_VALUE, min.lcfsKey());
    QueuedRequest huge = new QueuedRequest(null, 0, 0, 1e300, null, 0);
    assertEquals(Long.MAX_VALUE, huge.priorityJumpNanos());
    assertEquals(Long.MIN_VALUE + 1, huge.fcfsKey());
    assertEquals(Long.MAX_VALUE, QueueMath.saturatingMultiply(Long.MAX_VALUE, 2));
    assertEquals(Long.MAX_VALUE, QueueMath.saturatingMultiply(1L << 62, 2));
    assertEquals(6, QueueMath.saturatingMultiply(2, 3));
    assertEquals(Long.MAX_VALUE, QueueMath.saturatingAdd(Long.MAX_VALUE, 1));
    assertEquals(Long.MAX_VALUE, QueueMath.saturatingSubtract(Long.MAX_VALUE, -1));
    assertEquals(-1, QueueMath.saturatingSubtract(1, 2));
  }
}
