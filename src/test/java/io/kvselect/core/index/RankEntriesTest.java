package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The device-tier reverse names of {@link RankEntries}: a node is named by the hash it was stored
 * under last, and a name goes away with the entry it mirrors, so names never outlive entries.
 */
class RankEntriesTest {

  private static final int DEVICE = StorageTier.DEVICE.ordinal();
  private static final int HOST = StorageTier.HOST_PINNED.ordinal();

  private final ChainNodes nodes = new ChainNodes();
  private final RankEntries entries = new RankEntries(new WorkerRank(1, 0), 0);
  private final long[] out = new long[1];

  private int node(long chain) {
    return nodes.findOrCreate(chain, chain, ChainNodes.NONE);
  }

  private long name(int id) {
    assertTrue(entries.deviceExternal(id, nodes, out, 0), "node " + id + " has a name");
    return out[0];
  }

  @Test
  void theLastStoredNameWinsAndRemovingAnOlderNameKeepsIt() {
    int id = node(10);
    entries.put(DEVICE, 0x8000000000000001L, id, nodes);
    assertEquals(0x8000000000000001L, name(id));
    entries.put(DEVICE, 77, id, nodes);
    assertEquals(77, name(id));
    assertEquals(1, entries.deviceNameCount());
    entries.remove(DEVICE, 0x8000000000000001L, nodes);
    assertEquals(77, name(id));
    entries.remove(DEVICE, 77, nodes);
    assertFalse(entries.deviceExternal(id, nodes, out, 0));
    assertEquals(0, entries.deviceNameCount());
  }

  @Test
  void aHashMovedToAnotherNodeStopsNamingTheOldOne() {
    int first = node(10);
    int second = node(20);
    entries.put(DEVICE, 55, first, nodes);
    assertEquals(first, entries.put(DEVICE, 55, second, nodes));
    assertFalse(entries.deviceExternal(first, nodes, out, 0));
    assertEquals(55, name(second));
    assertEquals(1, entries.deviceNameCount());
  }

  @Test
  void aChainHashTakenOverByItsOwnNodeDropsTheOtherName() {
    int other = node(10);
    int own = node(20);
    entries.put(DEVICE, 20, other, nodes);
    assertEquals(20, name(other));
    assertEquals(other, entries.put(DEVICE, 20, own, nodes));
    assertFalse(entries.deviceExternal(other, nodes, out, 0));
    assertEquals(0, entries.deviceNameCount());
    assertEquals(20, name(own));
  }

  @Test
  void ownEntriesAndLowerTiersKeepNoNames() {
    int id = node(30);
    entries.put(DEVICE, 30, id, nodes);
    entries.put(HOST, 99, id, nodes);
    assertEquals(0, entries.deviceNameCount());
    assertEquals(30, name(id));
    int lower = node(40);
    entries.put(HOST, 98, lower, nodes);
    assertFalse(entries.deviceExternal(lower, nodes, out, 0));
    entries.remove(HOST, 99, nodes);
    assertEquals(30, name(id));
  }
}
