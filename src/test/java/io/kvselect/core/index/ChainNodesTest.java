package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import it.unimi.dsi.fastutil.HashCommon;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ChainNodes} on its own: the open-addressing table (deletion must keep every other key
 * reachable, including runs that wrap past the end of the table), reference counting with
 * cascading release, id recycling and the per-tier slot sets.
 */
class ChainNodesTest {

  /** The initial table has 32 slots and grows past 24 keys. */
  private static final int SLOTS = 32;

  /** Keys whose home slot in a fresh table is one of {@code homes}. */
  private static List<Long> keysHomedAt(int count, int... homes) {
    List<Long> keys = new ArrayList<>();
    for (long c = 1; keys.size() < count; c++) {
      int home = (int) HashCommon.mix(c) & (SLOTS - 1);
      for (int h : homes) {
        if (home == h) {
          keys.add(c);
          break;
        }
      }
    }
    return keys;
  }

  @Test
  void deletionKeepsWrappedProbeRunsReachable() {
    List<Long> keys = keysHomedAt(40, 29, 30, 31, 0, 1);
    for (long seed = 1; seed <= 30; seed++) {
      Random rnd = new Random(seed);
      ChainNodes nodes = new ChainNodes();
      Map<Long, Integer> live = new HashMap<>();
      for (int op = 0; op < 300; op++) {
        long key = keys.get(rnd.nextInt(keys.size()));
        Integer id = live.get(key);
        if (id == null && live.size() < 20) {
          int created = nodes.findOrCreate(key, key * 7, ChainNodes.NONE);
          nodes.retain(created);
          live.put(key, created);
        } else if (id != null) {
          nodes.release(id);
          live.remove(key);
        }
        assertEquals(live.size(), nodes.count(), "seed " + seed + " op " + op);
        for (long k : keys) {
          int expected = live.getOrDefault(k, ChainNodes.NONE);
          assertEquals(expected, nodes.find(k), "seed " + seed + " op " + op + " key " + k);
        }
      }
    }
  }

  @Test
  void deletingTheHeadOfARunThatWrapsMovesItsSuccessorsBack() {
    List<Long> atEnd = keysHomedAt(3, 31);
    List<Long> atStart = keysHomedAt(2, 0);
    ChainNodes nodes = new ChainNodes();
    int[] ids = new int[5];
    long[] order = {atEnd.get(0), atEnd.get(1), atStart.get(0), atEnd.get(2), atStart.get(1)};
    for (int i = 0; i < order.length; i++) {
      ids[i] = nodes.findOrCreate(order[i], i, ChainNodes.NONE);
      nodes.retain(ids[i]);
    }
    nodes.release(ids[0]);
    nodes.release(ids[2]);
    assertEquals(ChainNodes.NONE, nodes.find(order[0]));
    assertEquals(ChainNodes.NONE, nodes.find(order[2]));
    assertEquals(ids[1], nodes.find(order[1]));
    assertEquals(ids[3], nodes.find(order[3]));
    assertEquals(ids[4], nodes.find(order[4]));
    assertEquals(3, nodes.count());
  }

  @Test
  void releasingALeafFreesEveryAncestorNoLongerReferenced() {
    ChainNodes nodes = new ChainNodes();
    int parent = ChainNodes.NONE;
    int[] ids = new int[40];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = nodes.findOrCreate(1_000 + i, i, parent);
      parent = ids[i];
    }
    nodes.retain(ids[39]);
    nodes.retain(ids[9]);
    assertEquals(40, nodes.count());

    nodes.release(ids[39]);
    assertEquals(10, nodes.count(), "nodes 10..39 freed, 0..9 still held through node 9");
    for (int i = 0; i < 40; i++) {
      assertEquals(i < 10 ? ids[i] : ChainNodes.NONE, nodes.find(1_000 + i), "node " + i);
    }
    nodes.release(ids[9]);
    assertEquals(0, nodes.count());
    for (int i = 0; i < 40; i++) {
      assertEquals(ChainNodes.NONE, nodes.find(1_000 + i));
    }
  }

  @Test
  void freedIdsAreRecycledBeforeNewOnesAreAllocated() {
    ChainNodes nodes = new ChainNodes();
    int parent = ChainNodes.NONE;
    for (int i = 0; i < 40; i++) {
      parent = nodes.findOrCreate(5_000 + i, i, parent);
    }
    nodes.retain(parent);
    nodes.release(parent);
    assertEquals(0, nodes.count());
    parent = ChainNodes.NONE;
    for (int i = 0; i < 40; i++) {
      parent = nodes.findOrCreate(9_000 + i, i, parent);
      assertTrue(parent < 40, "id " + parent + " is recycled");
      assertEquals(parent, nodes.find(9_000 + i));
      assertEquals(i, nodes.local(parent));
    }
    assertEquals(40, nodes.count());
  }

  @Test
  void aNodeIsFoundAfterTheTableGrowsManyTimes() {
    ChainNodes nodes = new ChainNodes();
    int[] ids = new int[500];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = nodes.findOrCreate(-(i * 1_000_003L) - 1, i, ChainNodes.NONE);
      nodes.retain(ids[i]);
    }
    assertEquals(500, nodes.count());
    for (int i = 0; i < ids.length; i++) {
      assertEquals(ids[i], nodes.find(-(i * 1_000_003L) - 1));
      assertEquals(ids[i], nodes.findOrCreate(-(i * 1_000_003L) - 1, 0, ChainNodes.NONE));
      assertEquals(i, nodes.local(ids[i]));
      assertEquals(ChainNodes.NONE, nodes.parent(ids[i]));
    }
    for (int i = 0; i < ids.length; i += 2) {
      nodes.release(ids[i]);
    }
    assertEquals(250, nodes.count());
    for (int i = 0; i < ids.length; i++) {
      assertEquals(i % 2 == 0 ? ChainNodes.NONE : ids[i], nodes.find(-(i * 1_000_003L) - 1));
    }
  }

  /**
   * Past 65,535 and 131,071 ids the table's slots give bits from the tag to the id and are
   * re-encoded; every node stays findable, freed ones stay gone, and recycled ids are found.
   */
  @Test
  void nodesStayFindableWhileTheIdWidthGrows() {
    ChainNodes nodes = new ChainNodes();
    int n = 200_000;
    int[] ids = new int[n];
    for (int i = 0; i < n; i++) {
      ids[i] = nodes.findOrCreate(i * 0x9E3779B97F4A7C15L + 7, i, ChainNodes.NONE);
      nodes.retain(ids[i]);
      if (i == 70_000) {
        for (int j = 0; j < 1000; j++) {
          nodes.release(ids[j * 3]);
        }
      }
    }
    assertEquals(n - 1000, nodes.count());
    for (int i = 0; i < n; i++) {
      boolean freed = i < 3000 && i % 3 == 0;
      int found = nodes.find(i * 0x9E3779B97F4A7C15L + 7);
      if (freed) {
        assertEquals(ChainNodes.NONE, found, "freed " + i);
      } else {
        assertEquals(ids[i], found, "key " + i);
        assertEquals(i, nodes.local(found));
      }
    }
    for (int i = 0; i < n; i++) {
      assertEquals(ChainNodes.NONE, nodes.find(-(i * 1_000_003L) - 5), "absent " + i);
    }
  }

  @Test
  void referenceCountsPastAByteAreExactAndTheNodeIsFreedAtZero() {
    ChainNodes nodes = new ChainNodes();
    int root = nodes.findOrCreate(1, 1, ChainNodes.NONE);
    int[] children = new int[600];
    for (int i = 0; i < children.length; i++) {
      children[i] = nodes.findOrCreate(10_000 + i, i, root);
      nodes.retain(children[i]);
    }
    for (int i = 0; i < 400; i++) {
      nodes.retain(root);
    }
    assertEquals(1_000, nodes.refs(root), "600 children and 400 entries");
    for (int i = 0; i < 400; i++) {
      nodes.release(root);
    }
    assertEquals(600, nodes.refs(root));
    for (int i = 0; i < children.length; i++) {
      assertEquals(1, nodes.refs(children[i]));
      nodes.release(children[i]);
      assertEquals(children.length - 1 - i, i == children.length - 1 ? 0 : nodes.refs(root));
    }
    assertEquals(0, nodes.count(), "the root went when its last child did");
    int again = nodes.findOrCreate(2, 2, ChainNodes.NONE);
    assertEquals(0, nodes.refs(again), "a recycled id starts with no references");
  }

  @Test
  void slotSetsGrowAndShrinkPerTier() {
    ChainNodes nodes = new ChainNodes();
    int id = nodes.findOrCreate(77, 77, ChainNodes.NONE);
    for (int tier = 0; tier < 4; tier++) {
      assertEquals(0, nodes.set(id, tier));
      for (int slot = 0; slot < 40; slot++) {
        assertFalse(nodes.has(id, tier, slot));
        nodes.add(id, tier, slot);
        for (int s = 0; s < 42; s++) {
          assertEquals(s <= slot, nodes.has(id, tier, s), "tier " + tier + " slot " + s);
        }
      }
      for (int other = 0; other < 4; other++) {
        assertEquals(other <= tier, nodes.has(id, other, 39));
      }
    }
    for (int tier = 3; tier >= 0; tier--) {
      for (int slot = 39; slot >= 0; slot--) {
        nodes.remove(id, tier, slot);
        for (int s = 0; s < 40; s++) {
          assertEquals(s < slot, nodes.has(id, tier, s), "tier " + tier + " slot " + s);
        }
      }
      assertEquals(0, nodes.set(id, tier));
    }
  }

  @Test
  void aSingleMemberLeftInABitsetIsStoredInline() {
    ChainNodes nodes = new ChainNodes();
    int id = nodes.findOrCreate(3, 3, ChainNodes.NONE);
    for (int slot = 0; slot < 70; slot++) {
      nodes.add(id, 0, slot);
    }
    assertTrue(nodes.set(id, 0) < 0);
    for (int slot = 0; slot < 70; slot++) {
      if (slot != 65) {
        nodes.remove(id, 0, slot);
      }
    }
    assertEquals(66, nodes.set(id, 0), "slot 65 inline");
    assertTrue(nodes.has(id, 0, 65));
    nodes.add(id, 0, 2);
    assertTrue(nodes.has(id, 0, 2));
    assertTrue(nodes.has(id, 0, 65));
  }
}
