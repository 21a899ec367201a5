package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import org.junit.jupiter.api.Test;

/**
 * {@link ResidentModelFeed} as an index: every read answers as the index it wraps (shard, sharded
 * view, matches, external hashes, size, dump), and of the writes only device-tier ones reach the
 * model, per rank (a rank reset clears that rank only) and per worker (a cleared worker, every
 * rank of it and no other worker).
 */
class ResidentModelFeedTest {

  private static final int BS = 16;
  private static final WorkerRank D0 = new WorkerRank(7, 0);
  private static final WorkerRank D1 = new WorkerRank(7, 1);
  private static final WorkerRank E = new WorkerRank(8, 0);

  private final ResidentModel m = new ResidentModel();

  private static long[] ids(long from, int n) {
    long[] a = new long[n];
    for (int i = 0; i < n; i++) {
      a[i] = from + i;
    }
    return a;
  }

  /** A rank whose shard is not 0 among {@code shards} (so a default 0 answer shows). */
  private static WorkerRank rankOffShardZero(int shards) {
    for (long w = 1; w < 1000; w++) {
      WorkerRank r = new WorkerRank(w, 0);
      if (ShardedBlockIndex.shardOf(r, shards) != 0) {
        return r;
      }
    }
    throw new AssertionError("every rank on shard 0");
  }

  @Test
  void readsAnswerAsTheWrappedIndex() {
    ShardedBlockIndex inner = new ShardedBlockIndex(4, PrefixChainIndex::new);
    ResidentModelFeed feed = new ResidentModelFeed(inner, m);
    assertSame(inner, feed.delegate());
    assertSame(inner, feed.sharded(), "a decorator answers as what it wraps");
    WorkerRank r = rankOffShardZero(4);
    assertNotEquals(0, feed.shardOf(r));
    assertEquals(inner.shardOf(r), feed.shardOf(r));

    assertTrue(feed.store(r, StorageTier.DEVICE, false, 0, ids(1, 3), ids(100, 3)));
    assertEquals(3, feed.size());
    assertEquals(inner.size(), feed.size());
    assertEquals(inner.dump(), feed.dump());
    assertEquals(3, feed.dump().size());
    assertEquals(3, feed.findMatches(ids(100, 3)).of(r).device());
    assertEquals(inner.findMatches(ids(100, 2)), feed.findMatches(ids(100, 2)));
    assertArrayEquals(ids(1, 2), feed.externalHashes(r, ids(100, 3), 2));
  }

  @Test
  void anUnshardedIndexHasNoShardedViewAndOneShard() {
    ResidentModelFeed feed = new ResidentModelFeed(new PrefixChainIndex(), m);
    assertNull(feed.sharded());
    assertEquals(0, feed.shardOf(rankOffShardZero(4)));
    assertEquals(0, feed.size());
  }

  @Test
  void onlyDeviceRemovalsReachTheModel() {
    ResidentModelFeed feed = new ResidentModelFeed(new PrefixChainIndex(), m);
    m.claim(D0, "s", ids(100, 2), BS);
    feed.store(D0, StorageTier.DEVICE, false, 0, ids(1, 2), ids(100, 2));
    feed.store(D0, StorageTier.HOST_PINNED, false, 0, ids(1, 2), ids(100, 2));
    feed.remove(D0, StorageTier.HOST_PINNED, ids(1, 2));
    assertEquals(2 * BS, m.residentTokens(D0, "s"), "a host-tier removal frees no decode memory");
    assertEquals(2, feed.size(), "but the index dropped the host entries");
    feed.remove(D0, StorageTier.DEVICE, ids(1, 1));
    assertEquals(BS, m.residentTokens(D0, "s"));
  }

  @Test
  void aRankResetClearsThatRankOnlyAndAClearedWorkerEveryRankOfIt() {
    ResidentModelFeed feed = new ResidentModelFeed(new PrefixChainIndex(), m);
    for (WorkerRank r : new WorkerRank[] {D0, D1, E}) {
      m.claim(r, "s", ids(100, 2), BS);
      feed.store(r, StorageTier.DEVICE, false, 0, ids(1, 2), ids(100, 2));
    }
    feed.removeRank(D1);
    assertEquals(0, m.used(D1));
    assertEquals(2 * BS, m.used(D0), "the worker's other rank keeps its blocks");
    assertEquals(2 * BS, m.residentTokens(E, "s"));
    assertEquals(4, feed.size(), "the index dropped the rank as well");

    feed.clearWorker(7);
    assertEquals(0, m.used(D0));
    assertEquals(0, m.residentTokens(D0, "s"));
    assertEquals(2 * BS, m.used(E), "another worker keeps its blocks");
    assertEquals(2, feed.size());
    assertFalse(
        feed.store(E, StorageTier.DEVICE, true, 999, ids(50, 1), ids(500, 1)), "unknown parent");
    assertEquals(2 * BS, m.used(E), "a rejected store is not reported");
  }

  @Test
  void aResetRankKeepsItsClaimsSoWhatItStoresAgainIsTheSessionsAgain() {
    ResidentModelFeed feed = new ResidentModelFeed(new PrefixChainIndex(), m);
    m.claim(D0, "s", ids(100, 2), BS);
    feed.store(D0, StorageTier.DEVICE, false, 0, ids(1, 2), ids(100, 2));
    feed.removeRank(D0);
    assertEquals(0, m.residentTokens(D0, "s"));
    feed.store(D0, StorageTier.DEVICE, false, 0, ids(1, 2), ids(100, 2));
    assertEquals(2 * BS, m.residentTokens(D0, "s"), "the live booking's claim survives the reset");
  }
}
