package io.kvselect.core.pending;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What every {@link PendingStore} must do, run against each implementation (the local cache
 * here, the Hazelcast map in {@code server/cluster}). A subclass says how to make a store and a
 * second handle on the same store (another member of a cluster; the same object locally), and
 * how a test waits for an entry's TTL to pass. Keys are fresh per test, so state that outlives a
 * test needs no cleanup. Keys and values have the service's shapes (a record holding a record,
 * arrays, boxes, nulls), which a store that serializes must carry intact.
 */
public abstract class PendingStoreContract {

  protected static final Duration TTL = Duration.ofSeconds(30);
  protected static final WorkerRank W2 = new WorkerRank(2, 1);

  /** A key shaped like the service's (partition, selection id). */
  public record Key(Part partition, String selectionId) {}

  public record Part(String model, String group) {}

  /** A value shaped like the service's pending selection. */
  public record Value(
      WorkerRank rank, long[] hashes, long[] none, Long maybe, boolean flag, String session) {}

  protected final MutableClock clock = new MutableClock();

  protected abstract PendingStore<Key, Value> store(
      MutableClock clock, Duration ttl, long maxBytes);

  /** A second handle on {@code s}'s entries (another member's; locally {@code s} itself). */
  protected abstract PendingStore<Key, Value> other(
      PendingStore<Key, Value> s, MutableClock clock, Duration ttl, long maxBytes);

  /** Waits until {@code gone} holds once {@code ttl} has passed (the test's clock, or real time). */
  protected abstract void awaitExpiry(MutableClock clock, Duration ttl, Callable<Boolean> gone)
      throws Exception;

  /** A TTL short enough to wait out in {@link #entriesExpireWithTheirTtl}. */
  protected Duration shortTtl() {
    return Duration.ofSeconds(3);
  }

  protected static <T> T get(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw (RuntimeException) SelectionException.unwrap(e);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  protected static Key key() {
    return new Key(new Part("m", "g"), "sel-" + UUID.randomUUID());
  }

  protected static Value value(String session) {
    return new Value(W2, new long[] {1, -2, Long.MAX_VALUE}, null, null, true, session);
  }

  @Test
  public void aValuePutOnOneHandleIsConsumedOnceOnTheOther() {
    PendingStore<Key, Value> a = store(clock, TTL, 1 << 20);
    PendingStore<Key, Value> b = other(a, clock, TTL, 1 << 20);
    Key k = key();
    long gen = get(a.put(k, value("s"), 100));
    PendingEntry<Value> e = get(b.peek(k));
    assertEquals(gen, e.generation());
    assertEquals(W2, e.value().rank());
    assertArrayEquals(new long[] {1, -2, Long.MAX_VALUE}, e.value().hashes());
    assertNull(e.value().none());
    assertNull(e.value().maybe());
    assertTrue(e.value().flag());
    assertEquals("s", e.value().session());
    assertTrue(get(b.removeIfGeneration(k, gen)));
    assertFalse(get(b.removeIfGeneration(k, gen)), "consumed once");
    assertNull(get(a.peek(k)));
  }

  @Test
  public void aNewerPutSurvivesALateConsumeOfTheOlderOne() {
    PendingStore<Key, Value> a = store(clock, TTL, 1 << 20);
    Key k = key();
    long old = get(a.put(k, value("old"), 10));
    long fresh = get(a.put(k, value("new"), 12));
    assertNotEquals(
        old,
        fresh,
        "a replacing put has a generation of its own (the interface promises no order)");
    assertFalse(get(a.removeIfGeneration(k, old)), "a stale generation removes nothing");
    assertEquals("new", get(a.peek(k)).value().session());
    assertEquals(fresh, get(a.peek(k)).generation());
    get(a.remove(k));
    assertNull(get(a.peek(k)));
    get(a.remove(k));
    assertNull(get(a.peek(k)), "removing an absent key is a no-op");
  }

  @Test
  public void anEntryLargerThanTheByteBudgetIsNotStoredAndDropsTheOneItReplaces() {
    PendingStore<Key, Value> a = store(clock, TTL, 100);
    Key k = key();
    get(a.put(k, value("small"), 50));
    assertNotNull(get(a.peek(k)));
    get(a.put(k, value("huge"), 101));
    assertNull(get(a.peek(k)));
  }

  @Test
  public void entriesExpireWithTheirTtl() throws Exception {
    Duration ttl = shortTtl();
    PendingStore<Key, Value> a = store(clock, ttl, 1 << 20);
    Key k = key();
    long gen = get(a.put(k, value("s"), 10));
    assertNotNull(get(a.peek(k)));
    awaitExpiry(clock, ttl, () -> get(a.peek(k)) == null);
    assertFalse(get(a.removeIfGeneration(k, gen)), "an expired entry is not consumed");
  }
}
