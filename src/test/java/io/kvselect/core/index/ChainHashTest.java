package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.hash.BlockHasher;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** {@link ChainHash#chain} is {@link BlockHasher#chain} (XXH3-64, seed 1337, 16 bytes). */
class ChainHashTest {

  @Property(tries = 5000)
  void equalsTheLibraryHash(@ForAll long parent, @ForAll long local) {
    assertEquals(BlockHasher.chain(parent, local, new long[2]), ChainHash.chain(parent, local));
  }

  @Test
  void equalsTheLibraryHashOnEdgeValues() {
    long[] edges = {0L, 1L, -1L, Long.MIN_VALUE, Long.MAX_VALUE, 0x8000_0000L, 1337L};
    for (long p : edges) {
      for (long l : edges) {
        assertEquals(BlockHasher.chain(p, l, new long[2]), ChainHash.chain(p, l), p + ", " + l);
      }
    }
  }
}
