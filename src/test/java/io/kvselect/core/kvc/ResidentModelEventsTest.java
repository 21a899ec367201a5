package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import org.junit.jupiter.api.Test;

/**
 * The admission model fed by KV events ({@link ResidentModelFeed} over a real index): a booking
 * claims its prompt's blocks for its session, what the worker stores then counts as the
 * session's, the blocks a request adds past its prompt follow their parent, and a session stops
 * counting when its blocks are removed or the worker clears its cache.
 */
class ResidentModelEventsTest {

  static final WorkerRank D = new WorkerRank(7, 0);
  static final WorkerRank E = new WorkerRank(8, 0);
  static final int BS = 16;
  static final KvcParams NET = KvcParams.defaults().withAccounting(AdmitAccounting.NET);

  private final ResidentModel m = new ResidentModel();
  private final ResidentModelFeed index = new ResidentModelFeed(new PrefixChainIndex(), m);

  private static long[] ids(long from, int n) {
    long[] a = new long[n];
    for (int i = 0; i < n; i++) {
      a[i] = from + i;
    }
    return a;
  }

  @Test
  void storedBlocksClaimedByABookingAreItsSessionsAndItsOutputFollowsTheParent() {
    m.claim(D, "s", ids(1000, 4), BS);
    index.store(D, StorageTier.DEVICE, false, 0, ids(1, 4), ids(1000, 4));
    index.store(D, StorageTier.DEVICE, true, 4, ids(5, 2), ids(5000, 2));
    assertEquals(6 * BS, m.residentTokens(D, "s"), "4 prompt blocks + 2 output blocks");
    assertEquals(6 * BS, m.used(D));
    assertEquals(0, m.residentTokens(E, "s"));
  }

  @Test
  void anEvictedSessionStopsCountingWhenItsBlocksGo() {
    m.claim(D, "s", ids(1000, 4), BS);
    index.store(D, StorageTier.DEVICE, false, 0, ids(1, 4), ids(1000, 4));
    KvcRequest next = new KvcRequest("s", 1, 4 * BS + 10, 10);
    assertEquals(KvcMode.DIRECT, m.decide(D, next, 100_000, NET).mode());
    index.remove(D, StorageTier.DEVICE, ids(3, 2));
    assertEquals(2 * BS, m.residentTokens(D, "s"), "two blocks left");
    index.remove(D, StorageTier.DEVICE, ids(1, 2));
    assertEquals(0, m.residentTokens(D, "s"));
    assertEquals(0, m.used(D));
    assertEquals(KvcMode.RESEED, m.decide(D, next, 100_000, NET).mode(), "not resident any more");
  }

  @Test
  void aClearedWorkerHoldsNothingAndOtherTiersDoNotCount() {
    m.claim(D, "s", ids(1000, 4), BS);
    index.store(D, StorageTier.DEVICE, false, 0, ids(1, 4), ids(1000, 4));
    index.store(D, StorageTier.HOST_PINNED, false, 0, ids(90, 2), ids(1000, 2));
    assertEquals(4 * BS, m.used(D), "host blocks hold no decode memory");
    index.clearWorker(D.workerId());
    assertEquals(0, m.used(D));
    assertEquals(0, m.residentTokens(D, "s"));
  }

  @Test
  void aPrefixTwoLiveBookingsClaimIsNobodysButCountsAsUsed() {
    m.claim(D, "a", ids(1000, 3), BS);
    m.claim(D, "b", new long[] {1000, 1001, 2000}, BS);
    index.store(D, StorageTier.DEVICE, false, 0, ids(1, 3), ids(1000, 3));
    assertEquals(BS, m.residentTokens(D, "a"), "only a's own third block");
    assertEquals(0, m.residentTokens(D, "b"));
    assertEquals(3 * BS, m.used(D), "the shared blocks still take memory");
  }

  @Test
  void aBlockStoredAfterTheClaimEndedFollowsItsParentAndARejectedStoreIsNotCounted() {
    m.claim(D, "s", ids(1000, 2), BS);
    index.store(D, StorageTier.DEVICE, false, 0, ids(1, 2), ids(1000, 2));
    m.unclaim(D, "s");
    index.store(D, StorageTier.DEVICE, true, 2, ids(3, 1), ids(3000, 1));
    assertEquals(3 * BS, m.residentTokens(D, "s"));
    index.store(D, StorageTier.DEVICE, true, 999, ids(50, 2), ids(4000, 2));
    assertEquals(3 * BS, m.used(D), "a store with an unknown parent changes nothing");
  }
}
