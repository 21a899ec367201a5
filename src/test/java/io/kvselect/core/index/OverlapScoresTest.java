package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Value semantics of {@link OverlapScores} in both representations, {@link OverlapMerge}'s tier
 * boundaries, and the small value types {@link WorkerRank} and {@link StorageTier}.
 */
class OverlapScoresTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);
  private static final WorkerRank C = new WorkerRank(3, 0);

  private static OverlapScores fromIndex() {
    PrefixChainIndex idx = new PrefixChainIndex();
    idx.store(A, StorageTier.DEVICE, false, 0, new long[] {101, 102}, new long[] {1, 2});
    idx.store(B, StorageTier.DEVICE, false, 0, new long[] {101}, new long[] {1});
    idx.store(C, StorageTier.DEVICE, false, 0, new long[] {109}, new long[] {9});
    return idx.findMatches(new long[] {1, 2});
  }

  @Test
  void slotFormAndMapFormAreEqualWhenTheirRanksAre() {
    OverlapScores slots = fromIndex();
    OverlapScores map =
        new OverlapScores(Map.of(A, new RankOverlap(2, 0, 0, 0), B, new RankOverlap(1, 0, 0, 0)));
    assertEquals(map, slots);
    assertEquals(slots, map);
    assertEquals(map.hashCode(), slots.hashCode());
    assertTrue(slots.toString().startsWith("OverlapScores[ranks={"), slots.toString());
    assertTrue(slots.toString().contains("1:0=RankOverlap[device=2,"), slots.toString());
    assertTrue(slots.toString().contains("2:0=RankOverlap[device=1,"), slots.toString());
  }

  @Test
  void differentRanksOrDepthsAreNotEqual() {
    OverlapScores slots = fromIndex();
    assertNotEquals(OverlapScores.EMPTY, slots);
    assertNotEquals(slots, OverlapScores.EMPTY);
    assertNotEquals(new OverlapScores(Map.of(A, new RankOverlap(2, 0, 0, 0))), slots);
    assertNotEquals(
        new OverlapScores(Map.of(A, new RankOverlap(2, 0, 0, 0), B, new RankOverlap(2, 0, 0, 0))),
        slots);
    assertNotEquals(slots, "not scores");
    assertNotEquals(slots, null);
    assertEquals(OverlapScores.EMPTY, new OverlapScores(Map.of()));
  }

  @Test
  void sizeOfAndForEachInBothForms() {
    OverlapScores slots = fromIndex();
    OverlapScores map = new OverlapScores(new HashMap<>(slots.ranks()));
    for (OverlapScores s : List.of(slots, map)) {
      assertEquals(2, s.size());
      assertFalse(s.isEmpty());
      assertEquals(new RankOverlap(2, 0, 0, 0), s.of(A));
      assertEquals(new RankOverlap(1, 0, 0, 0), s.of(B));
      assertSame(RankOverlap.NONE, s.of(C), "a known rank without a match");
      assertSame(RankOverlap.NONE, s.of(new WorkerRank(99, 0)), "an unknown rank");
      List<WorkerRank> seen = new ArrayList<>();
      s.forEach(
          (r, o) -> {
            seen.add(r);
            assertEquals(s.of(r), o);
          });
      seen.sort(null);
      assertEquals(List.of(A, B), seen);
    }
    assertTrue(OverlapScores.EMPTY.isEmpty());
    assertEquals(0, OverlapScores.EMPTY.size());
    assertSame(slots.ranks(), slots.ranks(), "built once");
  }

  @Test
  void mergeWithAnEmptySideOrPrimary() {
    OverlapScores p = new OverlapScores(Map.of(A, new RankOverlap(1, 0, 0, 0)));
    assertEquals(p, OverlapMerge.maxDevice(p, OverlapScores.EMPTY));
    assertEquals(p, OverlapMerge.maxDevice(OverlapScores.EMPTY, p));
    assertEquals(
        OverlapScores.EMPTY, OverlapMerge.maxDevice(OverlapScores.EMPTY, OverlapScores.EMPTY));
  }

  @Test
  void mergeKeepsDiskAndExternalRangesThatReachPastTheSideDepth() {
    OverlapScores p =
        new OverlapScores(
            Map.of(
                A, new RankOverlap(1, 1, 3, 0),
                B, new RankOverlap(1, 1, 0, 3),
                C, new RankOverlap(5, 1, 0, 0)));
    OverlapScores s =
        new OverlapScores(
            Map.of(
                A,
                new RankOverlap(3, 0, 0, 0),
                B,
                new RankOverlap(4, 0, 0, 0),
                C,
                new RankOverlap(2, 0, 0, 0),
                new WorkerRank(4, 0),
                new RankOverlap(6, 0, 0, 0)));
    OverlapScores m = OverlapMerge.maxDevice(p, s);
    assertEquals(new RankOverlap(3, 0, 2, 0), m.of(A));
    assertEquals(new RankOverlap(4, 0, 0, 1), m.of(B));
    assertEquals(new RankOverlap(5, 1, 0, 0), m.of(C));
    assertEquals(new RankOverlap(6, 0, 0, 0), m.of(new WorkerRank(4, 0)));
    assertEquals(4, m.size());
  }

  @Test
  void workerRanksOrderByUnsignedWorkerThenDpRank() {
    assertTrue(new WorkerRank(1, 5).compareTo(new WorkerRank(2, 0)) < 0);
    assertTrue(new WorkerRank(2, 0).compareTo(new WorkerRank(1, 5)) > 0);
    assertTrue(new WorkerRank(1, 0).compareTo(new WorkerRank(1, 1)) < 0);
    assertTrue(new WorkerRank(1, 1).compareTo(new WorkerRank(1, 0)) > 0);
    assertEquals(0, new WorkerRank(1, 1).compareTo(new WorkerRank(1, 1)));
    assertTrue(new WorkerRank(-1, 0).compareTo(new WorkerRank(Long.MAX_VALUE, 9)) > 0);
    assertEquals("7:3", new WorkerRank(7, 3).toString());
  }

  @Test
  void tierWireNamesRoundTrip() {
    for (StorageTier t : StorageTier.values()) {
      assertSame(t, StorageTier.fromWireName(t.wireName()));
    }
    assertEquals("host_pinned", StorageTier.HOST_PINNED.wireName());
    assertNull(StorageTier.fromWireName("HOST_PINNED"));
    assertNull(StorageTier.fromWireName(null));
  }

  @Test
  void enginesMediumsMapToTiers() {
    Map<String, StorageTier> expected =
        Map.ofEntries(
            Map.entry("GPU", StorageTier.DEVICE),
            Map.entry("device", StorageTier.DEVICE),
            Map.entry("CPU", StorageTier.HOST_PINNED),
            Map.entry("cpu_pinned", StorageTier.HOST_PINNED),
            Map.entry("CPU_TIER1", StorageTier.HOST_PINNED),
            Map.entry("CPU_TIER2", StorageTier.DISK),
            Map.entry("Disk", StorageTier.DISK),
            Map.entry("NVME", StorageTier.DISK),
            Map.entry("EXTERNAL", StorageTier.EXTERNAL),
            Map.entry("network", StorageTier.EXTERNAL),
            Map.entry("REMOTE", StorageTier.EXTERNAL),
            Map.entry("SHARED", StorageTier.EXTERNAL),
            Map.entry("TAPE", StorageTier.DEVICE));
    expected.forEach((medium, tier) -> assertSame(tier, StorageTier.fromMedium(medium), medium));
    assertSame(StorageTier.DEVICE, StorageTier.fromMedium(null));
  }
}
