package io.kvselect.core.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * Last-writer-wins catalog versions: two nodes that receive the same changes in any order (and
 * any of them twice) end with the same catalog and the same digest; a remembered removal keeps
 * an older upsert out until it expires.
 */
class CatalogVersionsTest {

  /** One change as a node would receive it: {@code spec} null for a removal. */
  record Change(long worker, Integer spec, long stamp) {
    CatalogVersion version() {
      // a spec's tie is derived from the spec, as CatalogVersion.upsertTie does from its text
      return new CatalogVersion(stamp, spec == null ? CatalogVersion.REMOVAL_TIE : spec + 1);
    }
  }

  /** A node's catalog reduced to worker id to spec, and its versions. */
  static final class Node {
    final CatalogVersions versions = new CatalogVersions(600_000, 1000);
    final Map<Long, Integer> catalog = new TreeMap<>();

    void apply(Change c) {
      if (!versions.accepts(c.worker(), c.version())) {
        return;
      }
      if (c.spec() == null) {
        catalog.remove(c.worker());
        versions.removed(c.worker(), c.version(), 0);
      } else {
        catalog.put(c.worker(), c.spec());
        versions.upserted(c.worker(), c.version(), 0);
      }
    }
  }

  @Provide
  Arbitrary<List<Change>> changes() {
    Arbitrary<Change> one =
        Combinators.combine(
                Arbitraries.longs().between(1, 4),
                Arbitraries.integers().between(0, 3).injectNull(0.3),
                Arbitraries.longs().between(1, 12))
            .as(Change::new);
    return one.list().ofMinSize(1).ofMaxSize(30);
  }

  @Property(tries = 300)
  void anyDeliveryOrderConverges(@ForAll("changes") List<Change> changes, @ForAll long seed) {
    List<Change> other = new ArrayList<>(changes);
    Random r = new Random(seed);
    Collections.shuffle(other, r);
    other.add(changes.get(r.nextInt(changes.size()))); // a duplicate delivery
    Node a = new Node();
    Node b = new Node();
    changes.forEach(a::apply);
    other.forEach(b::apply);
    assertEquals(a.catalog, b.catalog, "same changes, other order: " + changes + " / " + other);
    assertEquals(a.versions.digest(), b.versions.digest());
  }

  @Test
  void theNewerVersionWinsAndARemovalWinsATie() {
    Node n = new Node();
    n.apply(new Change(1, 2, 10));
    n.apply(new Change(1, 3, 9));
    assertEquals(Map.of(1L, 2), n.catalog, "an older upsert is ignored");
    n.apply(new Change(1, null, 10));
    assertEquals(Map.of(), n.catalog, "a removal at the same stamp wins");
    n.apply(new Change(1, 3, 10));
    assertEquals(Map.of(), n.catalog, "and keeps an upsert of that stamp out");
    n.apply(new Change(1, 3, 11));
    assertEquals(Map.of(1L, 3), n.catalog, "a newer upsert brings the worker back");
  }

  @Test
  void aRemovalIsRememberedForItsTtlThenForgotten() {
    CatalogVersions v = new CatalogVersions(1000, 10);
    v.upserted(1, new CatalogVersion(5, 1), 0);
    v.removed(1, new CatalogVersion(6, CatalogVersion.REMOVAL_TIE), 100);
    assertFalse(v.accepts(1, new CatalogVersion(5, 9)), "a late, older upsert stays out");
    assertEquals(1, v.tombstones(1099).size());
    assertEquals(List.of(), v.tombstones(1100), "forgotten after the TTL");
    assertNull(v.current(1));
    assertTrue(v.accepts(1, new CatalogVersion(5, 9)), "the TTL bounds how late a change may come");
  }

  @Test
  void atMostTheLimitOfRemovalsIsRemembered() {
    CatalogVersions v = new CatalogVersions(600_000, 3);
    for (long id = 1; id <= 5; id++) {
      v.removed(id, new CatalogVersion(id, CatalogVersion.REMOVAL_TIE), id);
    }
    assertEquals(
        List.of(3L, 4L, 5L),
        v.tombstones(6).stream().map(Map.Entry::getKey).toList(),
        "oldest dropped");
  }

  @Test
  void stampsRiseEvenWhenTheClockGoesBackAndPassEveryStampSeen() {
    CatalogVersions v = new CatalogVersions(1000, 10);
    long s1 = v.nextStamp(1000);
    long s2 = v.nextStamp(400);
    assertTrue(s2 > s1, s1 + " then " + s2);
    v.upserted(7, new CatalogVersion(5000, 1), 0);
    assertTrue(
        v.nextStamp(1000) > 5000, "a change made here after seeing a peer's is newer than it");
  }

  @Test
  void theDigestCoversWorkersAndVersionsButNotTheirOrder() {
    CatalogVersions a = new CatalogVersions(1000, 10);
    CatalogVersions b = new CatalogVersions(1000, 10);
    a.upserted(1, new CatalogVersion(3, 4), 0);
    a.upserted(2, new CatalogVersion(5, 6), 0);
    b.upserted(2, new CatalogVersion(5, 6), 0);
    b.upserted(1, new CatalogVersion(3, 4), 0);
    assertEquals(a.digest(), b.digest());
    b.upserted(1, new CatalogVersion(3, 5), 0);
    assertNotEquals(a.digest(), b.digest(), "another version of one worker");
    b.upserted(1, new CatalogVersion(3, 4), 0);
    b.removed(2, new CatalogVersion(7, CatalogVersion.REMOVAL_TIE), 0);
    assertNotEquals(a.digest(), b.digest(), "a missed removal");
    assertNotEquals(new CatalogVersions(1, 1).digest(), a.digest());
  }

  @Test
  void anUpsertTieIsStableForASpecAndNeverTheRemovalTie() {
    WorkerSpec s = WorkerSpec.builder(1L).modelName("m").endpoint("http://w").blockSize(16).build();
    assertEquals(CatalogVersion.upsertTie(s), CatalogVersion.upsertTie(s));
    assertTrue(
        CatalogVersion.upsertTie(s) >= 0
            && CatalogVersion.upsertTie(s) < CatalogVersion.REMOVAL_TIE);
  }
}
