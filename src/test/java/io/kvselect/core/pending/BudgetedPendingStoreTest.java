package io.kvselect.core.pending;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.budget.CallBudget;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link BudgetedPendingStore} over a store whose owner never answers (every stage stays pending),
 * and over one that answers: the fallbacks of each call, and the answers passed through.
 */
class BudgetedPendingStoreTest {

  /** {@link PendingStoreContract} through the budget, over a local store that always answers in time. */
  @Nested
  class OverALocalStore extends PendingStoreContract {
    @Override
    protected PendingStore<Key, Value> store(MutableClock clock, Duration ttl, long maxBytes) {
      return new BudgetedPendingStore<>(
          new LocalPendingStore<>(clock, ttl, 16, maxBytes),
          new CallBudget(Duration.ofSeconds(5), Runnable::run, k -> "member"));
    }

    @Override
    protected PendingStore<Key, Value> other(
        PendingStore<Key, Value> s, MutableClock clock, Duration ttl, long maxBytes) {
      return s;
    }

    @Override
    protected void awaitExpiry(
        MutableClock clock, Duration ttl, java.util.concurrent.Callable<Boolean> gone)
        throws Exception {
      clock.advance(ttl);
      org.junit.jupiter.api.Assertions.assertTrue(gone.call());
    }
  }

  /** A store whose every call waits forever, as one on a paused member does. */
  static final class Silent implements PendingStore<String, String> {
    int calls;

    @Override
    public CompletionStage<Long> put(String key, String value, long bytes) {
      calls++;
      return new CompletableFuture<>();
    }

    @Override
    public CompletionStage<PendingEntry<String>> peek(String key) {
      calls++;
      return new CompletableFuture<>();
    }

    @Override
    public CompletionStage<Boolean> removeIfGeneration(String key, long generation) {
      calls++;
      return new CompletableFuture<>();
    }

    @Override
    public CompletionStage<Void> remove(String key) {
      calls++;
      return new CompletableFuture<>();
    }

    @Override
    public int size() {
      return 0;
    }
  }

  private static <T> T get(CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void aSilentStoreAnswersEachCallByItsFallback() throws Exception {
    Silent silent = new Silent();
    BudgetedPendingStore<String, String> store =
        new BudgetedPendingStore<>(
            silent, new CallBudget(Duration.ofMillis(20), Runnable::run, k -> "member"));
    assertEquals(-1L, get(store.put("a", "x", 10)));
    ExecutionException e = assertThrows(ExecutionException.class, () -> get(store.peek("a")));
    SelectionException se = (SelectionException) e.getCause();
    assertEquals(
        ErrorCode.NOT_READY, se.code(), "a replay that cannot be decided here is a retryable 503");
    assertTrue(se.getMessage().contains("pending-selection store"), se.getMessage());
    assertTrue(get(store.removeIfGeneration("a", 1)));
    get(store.remove("a"));
    assertEquals(4, store.fallbacks());
    assertEquals(4, silent.calls, "every call still reached the store");
  }

  @Test
  void anAnsweringStoreIsPassedThrough() throws Exception {
    LocalPendingStore<String, String> local =
        new LocalPendingStore<>(java.time.Clock.systemUTC(), Duration.ofSeconds(60), 100, 1 << 20);
    BudgetedPendingStore<String, String> store =
        new BudgetedPendingStore<>(
            local, new CallBudget(Duration.ofSeconds(5), Runnable::run, k -> "member"));
    long g = get(store.put("a", "x", 10));
    assertEquals("x", get(store.peek("a")).value());
    assertTrue(get(store.removeIfGeneration("a", g)));
    assertEquals(null, get(store.peek("a")));
    assertEquals(0, store.fallbacks());
  }
}
