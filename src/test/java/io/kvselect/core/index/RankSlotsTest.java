package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Snapshots that share a generation stay what they were while the writer appends and frees. */
class RankSlotsTest {

  private static WorkerRank r(int i) {
    return new WorkerRank(i, 0);
  }

  @Test
  void earlierSnapshotsKeepTheirNamesThroughAppendsGrowthAndFrees() {
    List<RankSlots> history = new ArrayList<>();
    RankSlots s = RankSlots.empty();
    history.add(s);
    for (int i = 0; i < 100; i++) {
      s = s.append(r(i));
      history.add(s);
    }
    s = s.with(7, null);
    history.add(s);
    s = s.with(7, r(1000));
    history.add(s);
    for (int k = 0; k <= 100; k++) {
      RankSlots snap = history.get(k);
      assertEquals(k, snap.limit());
      for (int i = 0; i < 101; i++) {
        assertEquals(i < k ? i : -1, snap.slotOf(r(i)), "snapshot " + k + ", rank " + i);
      }
      assertEquals(-1, snap.slotOf(r(1000)));
      for (int i = 0; i < k; i++) {
        assertEquals(r(i), snap.rank(i));
      }
      int limit = k;
      assertThrows(ArrayIndexOutOfBoundsException.class, () -> snap.rank(limit));
    }
    RankSlots freed = history.get(101);
    assertEquals(-1, freed.slotOf(r(7)));
    assertNull(freed.rank(7));
    assertEquals(r(8), freed.rank(8), "other slots keep their names");
    assertEquals(8, freed.slotOf(r(8)));
    RankSlots reused = history.get(102);
    assertEquals(7, reused.slotOf(r(1000)));
    assertEquals(-1, reused.slotOf(r(7)));
    assertEquals(r(1000), reused.rank(7));
    RankSlots next = reused.append(r(2000));
    assertEquals(100, next.slotOf(r(2000)));
    assertEquals(-1, reused.slotOf(r(2000)));
  }

  @Test
  void indexQueriesNameRanksThatJoinAfterAnEarlierResult() {
    PrefixChainIndex index = new PrefixChainIndex();
    long[] q = {11, 12};
    long[] ext = {11, ChainHash.chain(11, 12)};
    index.store(r(1), StorageTier.DEVICE, false, 0, ext, q);
    OverlapScores before = index.findMatches(q);
    for (int i = 2; i < 40; i++) {
      index.store(r(i), StorageTier.DEVICE, false, 0, ext, q);
    }
    index.removeRank(r(1));
    OverlapScores after = index.findMatches(q);
    assertEquals(1, before.size());
    assertEquals(2, before.of(r(1)).device());
    assertEquals(0, before.of(r(5)).device());
    assertEquals(38, after.size());
    assertEquals(0, after.of(r(1)).device());
    assertEquals(2, after.of(r(39)).device());
  }
}
