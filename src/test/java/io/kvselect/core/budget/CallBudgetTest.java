package io.kvselect.core.budget;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * The breaker of {@link CallBudget}: one per route, tripped by a timeout, closed only by an
 * answer within the budget once the route has been quiet; reads and writes of one owner's keys
 * have their own routes, so a stalled backup does not make writes pay the budget again whenever a
 * read answers, and fast writes between stalled ones do not either.
 */
class CallBudgetTest {

  /** Reads wait for the owner ("P"); writes for the owner and a backup ("P+X"). */
  private static final CallBudget.Routes ROUTES =
      new CallBudget.Routes() {
        @Override
        public Object read(Object key) {
          return "P";
        }

        @Override
        public Object write(Object key) {
          return "P+X";
        }
      };

  private final CallBudget budget = new CallBudget(Duration.ofMillis(40), Runnable::run, ROUTES);
  private final LongAdder fallbacks = new LongAdder();

  private static <T> T get(java.util.concurrent.CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void aStalledWriteTripsTheWriteRouteOnlyAndFastReadsDoNotCloseIt() throws Exception {
    CompletableFuture<String> stalled = new CompletableFuture<>();
    assertEquals("local", get(budget.write("k1", stalled, () -> "local", fallbacks)));
    assertEquals(1, budget.trips());
    assertTrue(budget.isTripped("k1"));

    assertEquals(
        "shared",
        get(
            budget.read(
                "k2", CompletableFuture.completedFuture("shared"), () -> "local", fallbacks)),
        "a read waits for the owner only, which answers");
    assertTrue(budget.isTripped("k2"), "a fast read says nothing about the writes' backup");

    CompletableFuture<String> next = new CompletableFuture<>();
    long t0 = System.nanoTime();
    assertEquals("local", get(budget.write("k3", next, () -> "local", fallbacks)));
    assertTrue(
        System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(40) * 10,
        "no budget paid while tripped");
    assertEquals(2, fallbacks.sum());
    assertEquals(1, budget.trips());
  }

  @Test
  void aLateAnswerLeavesTheBreakerOpenAndAnAnswerWithinTheBudgetClosesIt() throws Exception {
    CallBudget b = new CallBudget(Duration.ofMillis(40), Duration.ZERO, Runnable::run, ROUTES);
    CompletableFuture<String> stalled = new CompletableFuture<>();
    get(b.write("k1", stalled, () -> "local", fallbacks));
    await().atMost(Duration.ofSeconds(10)).until(() -> b.isTripped("k1"));
    stalled.complete("late");
    assertTrue(b.isTripped("k1"), "answered after the budget: the next write would still wait");
    assertEquals(1, b.tripped());

    assertEquals(
        "shared",
        get(b.write("k2", CompletableFuture.completedFuture("shared"), () -> "local", fallbacks)),
        "a call made while tripped that answers at once is used");
    assertFalse(b.isTripped("k1"), "and, with no quiet period, it closed the breaker");
    assertEquals(0, b.tripped());
    assertEquals(1, fallbacks.sum());
  }

  /**
   * While a backup is paused, writes that change nothing (no backup sent) answer at once between
   * the stalled ones. Such an answer must not close the breaker: with the breaker closed by any
   * fast answer, each stalled write after it waited its whole budget again.
   */
  @Test
  void fastAnswersBetweenStalledCallsDoNotCloseTheBreaker() throws Exception {
    CallBudget b =
        new CallBudget(Duration.ofMillis(40), Duration.ofSeconds(30), Runnable::run, ROUTES);
    assertEquals(
        "local", get(b.write("k1", new CompletableFuture<String>(), () -> "local", fallbacks)));
    assertTrue(b.isTripped("k1"));
    for (int i = 0; i < 5; i++) {
      assertEquals(
          "shared",
          get(b.write("k2", CompletableFuture.completedFuture("shared"), () -> "local", fallbacks)),
          "an answer that is already there is used");
      CompletableFuture<String> answer =
          b.write("k3", new CompletableFuture<String>(), () -> "local", fallbacks)
              .toCompletableFuture();
      assertTrue(
          answer.isDone(),
          "round " + i + ": a stalled write after a fast answer takes its fallback at once");
      assertEquals("local", answer.get());
    }
    assertEquals(1, b.trips());
    assertEquals(6, fallbacks.sum());
  }

  @Test
  void theBreakerClosesAtTheFirstAnswerWithinTheBudgetAfterTheQuietPeriod() throws Exception {
    Duration quiet = Duration.ofMillis(300);
    CallBudget b = new CallBudget(Duration.ofMillis(40), quiet, Runnable::run, ROUTES);
    CompletableFuture<String> stalled = new CompletableFuture<>();
    get(b.write("k1", stalled, () -> "local", fallbacks));
    stalled.complete("late");
    long lastSlow = System.nanoTime();
    get(b.write("k2", CompletableFuture.completedFuture("shared"), () -> "local", fallbacks));
    assertTrue(b.isTripped("k1"), "a fast answer right after a late one leaves the breaker open");

    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(
            () -> {
              get(
                  b.write(
                      "k2", CompletableFuture.completedFuture("shared"), () -> "local", fallbacks));
              return !b.isTripped("k1");
            });
    assertTrue(
        System.nanoTime() - lastSlow >= quiet.toNanos(), "not closed before the route was quiet");
    CompletableFuture<String> next =
        b.write("k3", new CompletableFuture<String>(), () -> "local", fallbacks)
            .toCompletableFuture();
    assertFalse(next.isDone(), "closed: a new call waits its budget again");
    assertEquals("local", get(next));
  }

  /** Calls made while tripped still count: each one unanswered at its budget restarts the quiet period. */
  @Test
  void callsStillUnansweredAtTheirBudgetKeepTheBreakerOpen() throws Exception {
    Duration quiet = Duration.ofMillis(500);
    CallBudget b = new CallBudget(Duration.ofMillis(40), quiet, Runnable::run, ROUTES);
    get(b.write("k1", new CompletableFuture<String>(), () -> "local", fallbacks));
    long end = System.nanoTime() + 3 * quiet.toNanos();
    int[] rounds = {0};
    // a stalled call and a fast one every 50 ms for three quiet periods: never closed
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              rounds[0]++;
              get(b.write("k1", new CompletableFuture<String>(), () -> "local", fallbacks));
              get(
                  b.write(
                      "k2", CompletableFuture.completedFuture("shared"), () -> "local", fallbacks));
              assertTrue(
                  b.isTripped("k1"),
                  "round " + rounds[0] + ": a stalled call less than the quiet period ago");
              return System.nanoTime() >= end;
            });
    assertEquals(1, b.trips());
  }

  @Test
  void byOwnerGivesReadsAndWritesOneRoute() throws Exception {
    CallBudget b = new CallBudget(Duration.ofMillis(20), Runnable::run, k -> "owner");
    get(b.write("k", new CompletableFuture<String>(), () -> "local", fallbacks));
    get(b.read("k", new CompletableFuture<String>(), () -> "local", fallbacks));
    assertEquals(1, b.trips(), "the read took its fallback at once: same route");
    assertEquals(2, fallbacks.sum());
  }
}
