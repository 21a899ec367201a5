package io.kvselect.core.budget;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.SelectionException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * The rules of {@link CallBudget} at their edges, on a clock the test moves: the arguments it
 * refuses, the default quiet period, which failures are the request's own, an answer exactly at
 * the budget, the quiet period measured from the last sign of slowness, forgetting a route, and a
 * call that answers while its fallback is being computed.
 */
class CallBudgetRulesTest {

  private static final long MS = 1_000_000L;

  /** Every call waits for the same member. */
  private static final CallBudget.Routes ONE_ROUTE = CallBudget.Routes.byOwner(k -> "P");

  private final AtomicLong now = new AtomicLong(1_000 * MS);
  private final LongAdder fallbacks = new LongAdder();

  private CallBudget budget(long budgetMs, Duration quiet, Executor completions) {
    return new CallBudget(Duration.ofMillis(budgetMs), quiet, completions, ONE_ROUTE, now::get);
  }

  private static <T> T get(CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** A stalled write whose budget (real time) runs out trips the route at the test clock's now. */
  private void trip(CallBudget b) throws Exception {
    assertEquals(
        "local", get(b.write("k", new CompletableFuture<String>(), () -> "local", fallbacks)));
    assertTrue(b.isTripped("k"));
  }

  private String fastWrite(CallBudget b) throws Exception {
    return get(b.write("k", CompletableFuture.completedFuture("shared"), () -> "local", fallbacks));
  }

  @Test
  void theBudgetMustBePositiveAndTheQuietPeriodNotNegative() {
    Executor run = Runnable::run;
    assertThrows(IllegalArgumentException.class, () -> new CallBudget(null, run, ONE_ROUTE));
    assertThrows(
        IllegalArgumentException.class, () -> new CallBudget(Duration.ZERO, run, ONE_ROUTE));
    assertThrows(
        IllegalArgumentException.class,
        () -> new CallBudget(Duration.ofMillis(-1), run, ONE_ROUTE));
    assertThrows(
        IllegalArgumentException.class,
        () -> new CallBudget(Duration.ofMillis(40), Duration.ofMillis(-1), run, ONE_ROUTE));
    assertEquals(
        0, new CallBudget(Duration.ofMillis(40), Duration.ZERO, run, ONE_ROUTE).quietMillis());
  }

  @Test
  void theDefaultQuietPeriodIsTheLongerOfOneSecondAndTwiceTheBudget() {
    Executor run = Runnable::run;
    CallBudget shortBudget = new CallBudget(Duration.ofMillis(40), run, ONE_ROUTE);
    assertEquals(40, shortBudget.budgetMillis());
    assertEquals(CallBudget.MIN_QUIET.toMillis(), shortBudget.quietMillis());
    CallBudget longBudget = new CallBudget(Duration.ofMillis(800), run, ONE_ROUTE);
    assertEquals(800, longBudget.budgetMillis());
    assertEquals(1_600, longBudget.quietMillis());
    assertEquals(
        300,
        new CallBudget(Duration.ofMillis(800), Duration.ofMillis(300), run, ONE_ROUTE)
            .quietMillis());
  }

  @Test
  void aRequestErrorIsPassedOnWithoutAFallbackAndOtherFailuresTakeTheFallback() throws Exception {
    CallBudget b = budget(40, Duration.ZERO, Runnable::run);
    SelectionException refused = SelectionException.badRequest("model: unknown");
    ExecutionException e =
        assertThrows(
            ExecutionException.class,
            () ->
                get(
                    b.write(
                        "k", CompletableFuture.failedFuture(refused), () -> "local", fallbacks)));
    assertSame(refused, SelectionException.unwrap(e.getCause()));
    assertEquals(0, fallbacks.sum(), "the request's own error is not the cluster's slowness");
    assertTrue(CallBudget.isRequestError(new java.util.concurrent.CompletionException(refused)));
    assertFalse(CallBudget.isRequestError(new IllegalStateException("member left")));

    assertEquals(
        "local",
        get(
            b.write(
                "k",
                CompletableFuture.failedFuture(new IllegalStateException("member left")),
                () -> "local",
                fallbacks)));
    assertEquals(1, fallbacks.sum(), "any other failure takes the fallback");
    CallBudget tenSeconds = budget(10_000, Duration.ZERO, Runnable::run);
    assertTrue(
        tenSeconds
            .write(
                "k",
                CompletableFuture.failedFuture(new IllegalStateException("member left")),
                () -> "local",
                fallbacks)
            .toCompletableFuture()
            .isDone(),
        "at once: a member that failed the call costs no budget");
    assertEquals(0, b.trips(), "a failure that answers at once trips nothing");
  }

  @Test
  void aRequestErrorWithinTheBudgetClosesATrippedRoute() throws Exception {
    CallBudget b = budget(40, Duration.ZERO, Runnable::run);
    trip(b);
    SelectionException refused = SelectionException.badRequest("model: unknown");
    assertThrows(
        ExecutionException.class,
        () -> get(b.write("k", CompletableFuture.failedFuture(refused), () -> "local", fallbacks)));
    assertFalse(b.isTripped("k"), "the member answered, within the budget");
  }

  @Test
  void anAnswerExactlyAtTheBudgetIsWithinItAndOneNanosecondLaterIsNot() throws Exception {
    CallBudget b = budget(40, Duration.ZERO, Runnable::run);
    trip(b);
    CompletableFuture<String> late = new CompletableFuture<>();
    assertEquals("local", get(b.write("k", late, () -> "local", fallbacks)), "tripped: at once");
    now.addAndGet(40 * MS + 1);
    late.complete("shared");
    assertTrue(b.isTripped("k"), "answered 1 ns after the budget: a sign of slowness");

    CompletableFuture<String> onTime = new CompletableFuture<>();
    get(b.write("k", onTime, () -> "local", fallbacks));
    now.addAndGet(40 * MS);
    onTime.complete("shared");
    assertFalse(b.isTripped("k"), "answered at the budget: within it, and quiet 0 closes");
  }

  @Test
  void theQuietPeriodCountsFromTheLastSignOfSlownessAndEndsAtItsLength() throws Exception {
    CallBudget b = budget(40, Duration.ofMillis(300), Runnable::run);
    trip(b); // last sign of slowness: now
    now.addAndGet(200 * MS);
    assertEquals(
        "local",
        get(
            b.write(
                "k",
                CompletableFuture.failedFuture(new IllegalStateException("timed out")),
                () -> "local",
                fallbacks)),
        "a failure is a sign of slowness too");
    now.addAndGet(299 * MS);
    assertEquals("shared", fastWrite(b));
    assertTrue(b.isTripped("k"), "299 ms after the failure: not quiet yet");
    now.addAndGet(MS);
    assertEquals("shared", fastWrite(b));
    assertFalse(b.isTripped("k"), "300 ms after the failure: quiet, and this answer closes it");
  }

  @Test
  void aTrippedRouteIsForgottenOnlyAfterSixtySecondsWithoutSlowness() throws Exception {
    CallBudget b = budget(40, Duration.ofDays(1), Runnable::run);
    trip(b);
    now.addAndGet(CallBudget.FORGET_AFTER.toNanos());
    assertEquals(1, b.tripped(), "exactly 60 s: still kept");
    now.incrementAndGet();
    assertEquals(0, b.tripped(), "past 60 s: forgotten");
    assertFalse(b.isTripped("k"));
  }

  @Test
  void aCallAnsweredBeforeItsBudgetTripsNothingWhenTheBudgetRunsOut() throws Exception {
    AtomicInteger timersRun = new AtomicInteger();
    Executor counting =
        r -> {
          timersRun.incrementAndGet();
          r.run();
        };
    CallBudget b = budget(40, Duration.ZERO, counting);
    CompletableFuture<String> call = new CompletableFuture<>();
    CompletionStage<String> answer = b.write("k", call, () -> "local", fallbacks);
    call.complete("shared");
    assertEquals("shared", get(answer));
    await().atMost(Duration.ofSeconds(10)).until(() -> timersRun.get() >= 1);
    assertEquals(0, b.trips(), "the budget ran out after the answer: no sign of slowness");
    assertFalse(b.isTripped("k"));
    assertEquals(0, fallbacks.sum());
  }

  @Test
  void aCallThatAnswersWhileItsFallbackIsComputedWinsAndIsNotCounted() throws Exception {
    CallBudget b = budget(40, Duration.ofDays(1), Runnable::run);
    trip(b);
    fallbacks.reset();
    CompletableFuture<String> call = new CompletableFuture<>();
    CompletionStage<String> answer =
        b.write(
            "k",
            call,
            () -> {
              call.complete("shared"); // the answer arrives meanwhile
              return "local";
            },
            fallbacks);
    assertEquals("shared", get(answer));
    assertEquals(0, fallbacks.sum(), "the fallback lost the race: not counted");

    CompletableFuture<String> call2 = new CompletableFuture<>();
    CompletionStage<String> answer2 =
        b.write(
            "k",
            call2,
            () -> {
              call2.complete("shared");
              throw new IllegalStateException("no local copy");
            },
            fallbacks);
    assertEquals("shared", get(answer2));
    assertEquals(0, fallbacks.sum(), "a failing fallback that lost the race is not counted either");
  }

  @Test
  void aFallbackThatThrowsFailsTheAnswerAndIsCounted() throws Exception {
    CallBudget b = budget(40, Duration.ofDays(1), Runnable::run);
    trip(b);
    fallbacks.reset();
    IllegalStateException none = new IllegalStateException("no local copy");
    ExecutionException e =
        assertThrows(
            ExecutionException.class,
            () ->
                get(
                    b.write(
                        "k",
                        new CompletableFuture<String>(),
                        () -> {
                          throw none;
                        },
                        fallbacks)));
    assertSame(none, e.getCause());
    assertEquals(1, fallbacks.sum());
  }
}
