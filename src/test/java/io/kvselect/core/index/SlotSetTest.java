package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@link SlotSet} against a sorted-set model, across the small-array and bitset forms. */
class SlotSetTest {

  @Test
  void emptySet() {
    assertFalse(SlotSet.contains(null, 0));
    assertEquals(0, SlotSet.single(null));
  }

  @Test
  void removingTheLastMemberEmptiesEitherForm() {
    Object small = SlotSet.add(null, 5);
    assertEquals(5, SlotSet.single(small));
    assertNull(SlotSet.remove(small, 5));

    Object bits = null;
    for (int s = 0; s <= SlotSet.SMALL_MAX; s++) {
      bits = SlotSet.add(bits, s * 10);
    }
    assertTrue(bits instanceof long[]);
    for (int s = 0; s < SlotSet.SMALL_MAX; s++) {
      bits = SlotSet.remove(bits, s * 10);
    }
    assertEquals(SlotSet.SMALL_MAX * 10, SlotSet.single(bits));
    assertNull(SlotSet.remove(bits, SlotSet.SMALL_MAX * 10));
  }

  @Test
  void singleOfABitsetWithOneMemberInALaterWord() {
    Object bits = null;
    for (int s = 0; s <= SlotSet.SMALL_MAX; s++) {
      bits = SlotSet.add(bits, 64 + s);
    }
    bits = SlotSet.add(bits, 3);
    for (int s = 0; s <= SlotSet.SMALL_MAX; s++) {
      assertEquals(-1, SlotSet.single(bits));
      bits = SlotSet.remove(bits, 64 + s);
    }
    assertEquals(3, SlotSet.single(bits));
    bits = SlotSet.add(bits, 200);
    bits = SlotSet.remove(bits, 3);
    assertEquals(200, SlotSet.single(bits));
  }

  @Test
  void slotZeroAndOneSlotInALaterWordAreTwoMembers() {
    Object bits = null;
    for (int s = 0; s <= SlotSet.SMALL_MAX; s++) {
      bits = SlotSet.add(bits, s);
    }
    bits = SlotSet.add(bits, 100);
    for (int s = 1; s <= SlotSet.SMALL_MAX; s++) {
      bits = SlotSet.remove(bits, s);
    }
    assertEquals(-1, SlotSet.single(bits));
    bits = SlotSet.remove(bits, 0);
    assertEquals(100, SlotSet.single(bits));
  }

  @Test
  void containsBeyondTheBitsetIsFalse() {
    Object bits = null;
    for (int s = 0; s <= SlotSet.SMALL_MAX; s++) {
      bits = SlotSet.add(bits, s);
    }
    assertFalse(SlotSet.contains(bits, 64));
    assertFalse(SlotSet.contains(bits, 1_000));
    assertTrue(SlotSet.contains(bits, SlotSet.SMALL_MAX));
  }

  @Test
  void randomOperationsMatchASortedSet() {
    for (long seed = 1; seed <= 40; seed++) {
      Random rnd = new Random(seed);
      int range = seed % 2 == 0 ? 40 : 300;
      TreeSet<Integer> model = new TreeSet<>();
      Object set = null;
      for (int op = 0; op < 400; op++) {
        int slot = rnd.nextInt(range);
        String where = "seed " + seed + " op " + op + " slot " + slot;
        boolean present = SlotSet.contains(set, slot);
        assertEquals(model.contains(slot), present, where);
        boolean grow = model.size() < 24 && (model.size() < 2 || rnd.nextInt(3) > 0);
        if (!present && grow) {
          set = SlotSet.add(set, slot);
          model.add(slot);
        } else if (present) {
          set = SlotSet.remove(set, slot);
          model.remove(slot);
        }
        int expectedSingle = model.isEmpty() ? 0 : model.size() == 1 ? model.first() : -1;
        assertEquals(expectedSingle, SlotSet.single(set), where);
        assertEquals(model.isEmpty(), set == null, where);
        for (int s = 0; s < range; s++) {
          assertEquals(model.contains(s), SlotSet.contains(set, s), where + " probe " + s);
        }
      }
    }
  }
}
