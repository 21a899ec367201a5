package io.kvselect.core.budget;

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
 * answer within the budget; reads and writes of one owner's keys have their own routes, so a
 * stalled backup does not make writes pay the budget again whenever a read answers.
 */
class CallBudgetTest {

  /** Reads wait for the owner ("P"); writes for the owner and a backup ("P+X"). */
  private static final CallBudget.Routes ROUTES = new CallBudget.Routes() {
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

    assertEquals("shared", get(budget.read("k2", CompletableFuture.completedFuture("shared"), () -> "local",
        fallbacks)), "a read waits for the owner only, which answers");
    assertTrue(budget.isTripped("k2"), "a fast read says nothing about the writes' backup");

    CompletableFuture<String> next = new CompletableFuture<>();
    long t0 = System.nanoTime();
    assertEquals("local", get(budget.write("k3", next, () -> "local", fallbacks)));
    assertTrue(System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(40) * 10, "no budget paid while tripped");
    assertEquals(2, fallbacks.sum());
    assertEquals(1, budget.trips());
  }

  @Test
  void aLateAnswerLeavesTheBreakerOpenAndAnAnswerWithinTheBudgetClosesIt() throws Exception {
    CompletableFuture<String> stalled = new CompletableFuture<>();
    get(budget.write("k1", stalled, () -> "local", fallbacks));
    Thread.sleep(60);
    stalled.complete("late");
    assertTrue(budget.isTripped("k1"), "answered after the budget: the next write would still wait");
    assertEquals(1, budget.tripped());

    assertEquals("shared", get(budget.write("k2", CompletableFuture.completedFuture("shared"), () -> "local",
        fallbacks)), "a call made while tripped that answers at once is used");
    assertFalse(budget.isTripped("k1"), "and it closed the breaker");
    assertEquals(0, budget.tripped());
    assertEquals(1, fallbacks.sum());
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
