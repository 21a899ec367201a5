package io.kvselect.tools.mock;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import java.util.Arrays;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The mock engine's prefix cache, LRU eviction and the events it derives, without sockets. */
class MockEngineTest {

  static final TimingModel TIMING = new TimingModel(100, 1000, 1);

  static int[] tokens(int from, int count) {
    return IntStream.range(from, from + count).toArray();
  }

  static long[] seq(int[] tokens, int bs) {
    return BlockHasher.sequenceHashes(
        BlockHasher.localBlockHashes(
            tokens, tokens.length, bs, BlockHasher.CHAIN_SEED, false, null));
  }

  static MockEngine.Prompt prompt(int[] tokens) {
    return new MockEngine.Prompt(tokens, null, null);
  }

  @Test
  void blockHashesAreDynamoPublicSequenceHashes() {
    MockEngine e = new MockEngine(1, 64, 16, TIMING);
    // dynamo_reference.md 2.2 golden vector: tokens 0..31, bs 16.
    assertArrayEquals(
        new long[] {
          Long.parseUnsignedLong("15310707395893867146"),
          Long.parseUnsignedLong("13769157705258532664")
        },
        e.chain(prompt(tokens(0, 32))));
    assertNotEquals(
        e.chain(prompt(tokens(0, 32)))[0],
        e.chain(new MockEngine.Prompt(tokens(0, 32), null, "tenant-a"))[0]);
  }

  @Test
  void storesCompleteBlocksAndChainsAnExtension() {
    MockEngine e = new MockEngine(1, 64, 4, TIMING);
    int[] first = tokens(1, 10);
    MockEngine.Plan p1 = e.admit(prompt(first), null, 3);
    assertEquals(0, p1.cachedTokens());
    assertEquals(10, p1.uncachedTokens());
    assertEquals(1.0, p1.prefillMs(), 1e-9);
    assertEquals(3.0, p1.decodeMs(), 1e-9);
    KvEventBatch b1 = e.commit(p1, 1.0);
    BlockStored s1 = assertInstanceOf(BlockStored.class, b1.events().get(0));
    assertEquals(1, b1.events().size());
    assertArrayEquals(seq(first, 4), s1.blockHashes());
    assertEquals(2, s1.blockHashes().length);
    assertFalse(s1.hasParent());
    assertArrayEquals(tokens(1, 8), s1.tokenIds());
    assertEquals("GPU", s1.medium());

    int[] longer = tokens(1, 16);
    MockEngine.Plan p2 = e.admit(prompt(longer), null, 0);
    assertEquals(8, p2.cachedTokens());
    assertEquals(8, p2.uncachedTokens());
    BlockStored s2 = assertInstanceOf(BlockStored.class, e.commit(p2, 2.0).events().get(0));
    long[] chain = seq(longer, 4);
    assertArrayEquals(Arrays.copyOfRange(chain, 2, 4), s2.blockHashes());
    assertTrue(s2.hasParent());
    assertEquals(chain[1], s2.parentHash());
    assertArrayEquals(tokens(9, 8), s2.tokenIds());
    assertNull(e.commit(e.admit(prompt(longer), null, 0), 3.0), "a full hit changes nothing");
    assertEquals(4, e.cachedBlocks(0));
  }

  @Test
  void lruEvictsTheTailOfTheLeastRecentChainFirst() {
    MockEngine e = new MockEngine(1, 4, 2, TIMING);
    int[] a = tokens(100, 4);
    int[] b = tokens(200, 4);
    e.commit(e.admit(prompt(a), null, 0), 1);
    e.commit(e.admit(prompt(b), null, 0), 2);
    e.admit(prompt(a), null, 0); // touches a: b is now least recent
    int[] c = tokens(300, 2);
    KvEventBatch batch = e.commit(e.admit(prompt(c), null, 0), 3);
    BlockRemoved removed = assertInstanceOf(BlockRemoved.class, batch.events().get(0));
    assertArrayEquals(new long[] {seq(b, 2)[1]}, removed.blockHashes(), "b's tail goes first");
    assertInstanceOf(BlockStored.class, batch.events().get(1));
    assertEquals(4, e.cachedBlocks(0));
    assertEquals(2, e.admit(prompt(a), null, 0).cachedTokens() / 2);
    assertEquals(1, e.admit(prompt(b), null, 0).cachedTokens() / 2);
  }

  @Test
  void promptLargerThanTheCacheAndBadRankAreRejected() {
    MockEngine e = new MockEngine(2, 2, 2, TIMING);
    assertThrows(IllegalArgumentException.class, () -> e.admit(prompt(tokens(0, 6)), null, 0));
    assertThrows(IllegalArgumentException.class, () -> e.admit(prompt(tokens(0, 2)), 2, 0));
    assertThrows(IllegalArgumentException.class, () -> e.admit(prompt(tokens(0, 2)), -1, 0));
  }

  @Test
  void ranksAreSeparateCachesAndUnpinnedRequestsFollowTheirPrefix() {
    MockEngine e = new MockEngine(2, 8, 2, TIMING);
    int[] p = tokens(0, 4);
    MockEngine.Plan on1 = e.admit(prompt(p), 1, 0);
    assertEquals(1, e.commit(on1, 1).dpRank());
    assertEquals(0, e.cachedBlocks(0));
    assertEquals(2, e.cachedBlocks(1));
    assertEquals(1, e.admit(prompt(p), null, 0).dpRank());
    assertEquals(4, e.admit(prompt(p), null, 0).cachedTokens());
    KvEventBatch cleared = e.clear(1, 2);
    assertInstanceOf(AllBlocksCleared.class, cleared.events().get(0));
    assertEquals(1, cleared.dpRank());
    assertEquals(0, e.cachedBlocks(1));
  }

  @Test
  void restartDropsEveryBlockSilently() {
    MockEngine e = new MockEngine(2, 8, 2, TIMING);
    e.commit(e.admit(prompt(tokens(0, 4)), 0, 0), 1);
    e.commit(e.admit(prompt(tokens(0, 4)), 1, 0), 1);
    e.restart();
    assertEquals(0, e.cachedBlocks(0) + e.cachedBlocks(1));
  }

  @Test
  void timingModelScalesWaitsBySpeedup() {
    TimingModel t = new TimingModel(50, 10_000, 4);
    assertEquals(100.0, t.prefillMs(2000), 1e-9);
    assertEquals(25, t.waitMs(t.prefillMs(2000)));
    assertEquals(50.0, t.decodeMs(5), 1e-9);
    assertThrows(IllegalArgumentException.class, () -> new TimingModel(1, 1, 0));
    assertThrows(IllegalArgumentException.class, () -> new TimingModel(-1, 1, 1));
  }
}
