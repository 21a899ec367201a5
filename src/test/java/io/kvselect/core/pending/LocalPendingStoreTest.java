package io.kvselect.core.pending;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * The local pending store: {@link PendingStoreContract}, plus its sizes, stages complete on
 * return, and the cache's deadline and argument rules.
 */
class LocalPendingStoreTest extends PendingStoreContract {

  @Override
  protected PendingStore<Key, Value> store(MutableClock clock, Duration ttl, long maxBytes) {
    return new LocalPendingStore<>(clock, ttl, 16, maxBytes);
  }

  @Override
  protected PendingStore<Key, Value> other(
      PendingStore<Key, Value> s, MutableClock clock, Duration ttl, long maxBytes) {
    return s;
  }

  @Override
  protected void awaitExpiry(MutableClock clock, Duration ttl, Callable<Boolean> gone)
      throws Exception {
    clock.advance(ttl.minusMillis(1));
    assertFalse(gone.call(), "live until its deadline");
    clock.advance(Duration.ofMillis(1));
    assertTrue(gone.call(), "gone at its deadline");
  }

  private static <T> T done(CompletionStage<T> st) {
    assertTrue(st.toCompletableFuture().isDone(), "the local store completes before returning");
    return st.toCompletableFuture().join();
  }

  @Test
  void storeOperationsCompleteAtOnceAndConsumeOneEntry() {
    var store = new LocalPendingStore<String, String>(clock, Duration.ofSeconds(120), 16, 1024);
    long g1 = done(store.put("k", "v1", 10));
    long g2 = done(store.put("k", "v2", 12));
    assertTrue(g2 > g1);
    assertEquals(1, store.size());
    assertEquals(12, store.bytes());
    assertEquals(new PendingEntry<>("v2", g2), done(store.peek("k")));
    assertFalse(done(store.removeIfGeneration("k", g1)), "a stale generation removes nothing");
    assertEquals(1, store.size());
    assertTrue(done(store.removeIfGeneration("k", g2)));
    assertNull(done(store.peek("k")));
    assertEquals(0, store.bytes());
    done(store.put("j", "w", 3));
    assertNull(done(store.remove("j")));
    assertEquals(0, store.size());
    assertNull(done(store.remove("j")), "removing an absent key is a no-op");
  }

  @Test
  void consumingExactlyAtTheDeadlineFails() {
    var cache = new PendingSelectionCache<String, String>(clock, Duration.ofSeconds(120), 16, 1024);
    long g = cache.put("early", "v", 5);
    clock.advance(Duration.ofMillis(119_999));
    assertTrue(
        cache.removeIfGeneration("early", g), "one millisecond before the deadline it is live");

    long h = cache.put("late", "v", 5);
    clock.advance(Duration.ofSeconds(120));
    assertFalse(cache.removeIfGeneration("late", h), "at the deadline the entry is expired");
    assertEquals(0, cache.size(), "and it is dropped all the same");
    assertEquals(0, cache.bytes());
  }

  @Test
  void anEntryIsLiveUntilItsDeadlineExactly() {
    var cache = new PendingSelectionCache<String, String>(clock, Duration.ofMillis(1000), 16, 1024);
    cache.put("a", "1", 1);
    clock.advance(Duration.ofMillis(999));
    assertEquals(new PendingEntry<>("1", 1), cache.peekEntry("a"));
    cache.put("b", "2", 1);
    assertEquals(2, cache.size(), "a put at 999 ms sweeps nothing");
    clock.advance(Duration.ofMillis(1));
    assertNull(cache.peekEntry("a"));
    assertEquals("2", cache.remove("b"));
    cache.put("c", "3", 1);
    clock.advance(Duration.ofMillis(1000));
    cache.put("d", "4", 1);
    assertEquals(1, cache.size(), "a put at the deadline sweeps the expired entry");
    assertEquals(1, cache.bytes());
  }

  @Test
  void limitsAndArgumentsAreChecked() {
    assertThrows(
        IllegalArgumentException.class, () -> new PendingSelectionCache<>(clock, null, 1, 1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new PendingSelectionCache<>(clock, Duration.ZERO, 1, 1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new PendingSelectionCache<>(clock, Duration.ofSeconds(-1), 1, 1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new PendingSelectionCache<>(clock, Duration.ofSeconds(1), 0, 1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new PendingSelectionCache<>(clock, Duration.ofSeconds(1), 1, 0));
    assertThrows(
        NullPointerException.class,
        () -> new PendingSelectionCache<>(null, Duration.ofSeconds(1), 1, 1));
    var one = new PendingSelectionCache<String, String>(clock, Duration.ofMillis(1), 1, 1);
    one.put("a", "1", 1);
    assertEquals(1, one.size(), "the smallest limits hold one entry");
    assertThrows(NullPointerException.class, () -> one.put(null, "v", 1));
    assertThrows(NullPointerException.class, () -> one.put("k", null, 1));
    assertThrows(IllegalArgumentException.class, () -> one.put("k", "v", -1));
    assertEquals("1", one.peek("a"), "a refused put changes nothing");
    one.put("z", "v", 0);
    assertEquals("v", one.peek("z"));
  }

  @Test
  void defaultLimitsAreDynamos() {
    assertEquals(Duration.ofSeconds(120), PendingSelectionCache.DEFAULT_TTL);
    assertEquals(4096, PendingSelectionCache.DEFAULT_MAX_ENTRIES);
    assertEquals(256L * 1024 * 1024, PendingSelectionCache.DEFAULT_MAX_BYTES);
    var cache = new PendingSelectionCache<Integer, String>(clock);
    for (int i = 0; i < 4097; i++) {
      cache.put(i, "v", 1);
    }
    assertEquals(4096, cache.size());
    assertNull(cache.peek(0));
    clock.advance(Duration.ofSeconds(119));
    assertEquals("v", cache.peek(1));
    clock.advance(Duration.ofSeconds(1));
    assertNull(cache.peek(1));
  }
}
