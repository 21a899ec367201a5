package io.kvselect.core.pending;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.testing.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class PendingSelectionCacheTest {

  private final MutableClock clock = new MutableClock();

  private PendingSelectionCache<String, String> cache(int maxEntries, long maxBytes) {
    return new PendingSelectionCache<>(clock, Duration.ofSeconds(120), maxEntries, maxBytes);
  }

  @Test
  void aConsumedEntryIsGoneForTheNextReplay() {
    var cache = cache(16, 1024);
    long gen = cache.put("sel-1", "w1", 10);
    PendingEntry<String> hit = cache.peekEntry("sel-1");
    assertEquals(new PendingEntry<>("w1", gen), hit);

    assertTrue(cache.removeIfGeneration("sel-1", hit.generation()));
    assertNull(cache.peek("sel-1"));
    assertFalse(cache.removeIfGeneration("sel-1", hit.generation()));
    assertEquals(0, cache.size());
    assertEquals(0, cache.bytes());
  }

  @Test
  void peekTreatsAnEntryPastItsTtlAsAbsent() {
    var cache = cache(16, 1024);
    cache.put("sel-1", "w1", 10);
    clock.advance(Duration.ofSeconds(119));
    assertEquals("w1", cache.peek("sel-1"));
    clock.advance(Duration.ofSeconds(1));
    assertNull(cache.peek("sel-1"));
    assertNull(cache.peekEntry("sel-1"));
    assertEquals(0, cache.bytes(), "the expired entry met by peek is dropped");
  }

  @Test
  void insertSweepsExpiredEntriesFromTheOldestSide() {
    var cache = cache(16, 1024);
    cache.put("a", "1", 10);
    cache.put("b", "2", 20);
    clock.advance(Duration.ofSeconds(60));
    cache.put("c", "3", 30);
    clock.advance(Duration.ofSeconds(60));

    cache.put("d", "4", 40);
    assertEquals(2, cache.size(), "a and b expired and were swept");
    assertEquals(70, cache.bytes());
    assertEquals("3", cache.peek("c"));
    assertEquals("4", cache.peek("d"));
  }

  @Test
  void entryCapEvictsOldestFirst() {
    var cache = cache(3, 1024);
    cache.put("a", "1", 1);
    cache.put("b", "2", 1);
    cache.put("c", "3", 1);
    cache.put("d", "4", 1);
    assertEquals(3, cache.size());
    assertNull(cache.peek("a"));
    assertEquals("2", cache.peek("b"));
    assertEquals("4", cache.peek("d"));
  }

  @Test
  void byteBudgetEvictsOldestFirst() {
    var cache = cache(16, 100);
    cache.put("a", "1", 40);
    cache.put("b", "2", 40);
    cache.put("c", "3", 30);
    assertNull(cache.peek("a"));
    assertEquals("2", cache.peek("b"));
    assertEquals("3", cache.peek("c"));
    assertEquals(70, cache.bytes());

    cache.put("d", "4", 100);
    assertEquals(1, cache.size(), "an entry the size of the budget leaves room for nothing else");
    assertEquals(100, cache.bytes());
  }

  @Test
  void anEntryLargerThanTheBudgetEvictsOnlyItself() {
    var cache = cache(16, 100);
    cache.put("a", "1", 40);
    cache.put("big", "old", 10);
    cache.put("big", "new", 101);
    assertNull(cache.peek("big"), "not stored, and the entry it replaced is gone");
    assertEquals("1", cache.peek("a"));
    assertEquals(40, cache.bytes());
  }

  @Test
  void replacingDropsTheOldBytesAndOrderSlot() {
    var cache = cache(2, 1024);
    cache.put("a", "1", 100);
    cache.put("b", "2", 5);
    cache.put("a", "1'", 7);
    assertEquals(12, cache.bytes());

    cache.put("c", "3", 1);
    assertNull(cache.peek("b"), "the replaced entry re-entered as newest, so b is oldest");
    assertEquals("1'", cache.peek("a"));
    assertEquals("3", cache.peek("c"));
  }

  @Test
  void generationSafeRemoveSparesANewerPut() {
    var cache = cache(16, 1024);
    long first = cache.put("sel-1", "w1", 10);
    long second = cache.put("sel-1", "w2", 10);
    assertTrue(second > first);

    assertFalse(cache.removeIfGeneration("sel-1", first));
    assertEquals("w2", cache.peek("sel-1"));
    assertTrue(cache.removeIfGeneration("sel-1", second));
    assertNull(cache.peek("sel-1"));
  }

  @Test
  void orderIndexStaysBoundedUnderRepeatedReplacement() {
    var cache = cache(4, 1024);
    for (int i = 0; i < 100_000; i++) {
      cache.put("k" + (i % 3), "v" + i, 8);
    }
    assertEquals(3, cache.size());
    assertEquals(24, cache.bytes());
    for (int k = 0; k < 3; k++) {
      assertNotNull(cache.peek("k" + k), "no live entry was evicted by stale order slots");
    }
  }

  @Test
  void removeReturnsOnlyALiveValue() {
    var cache = cache(16, 1024);
    cache.put("a", "1", 3);
    cache.put("b", "2", 4);
    assertEquals("1", cache.remove("a"));
    assertNull(cache.remove("a"));
    clock.advance(Duration.ofSeconds(120));
    assertNull(cache.remove("b"));
    assertEquals(0, cache.size());
    assertEquals(0, cache.bytes());
  }
}
