package io.kvselect.core.hash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BlockHasherTest {

  private static long u(String unsigned) {
    return Long.parseUnsignedLong(unsigned);
  }

  private static int[] range(int fromInclusive, int toInclusive) {
    return IntStream.rangeClosed(fromInclusive, toInclusive).toArray();
  }

  private static byte[] le(int[] tokens, int from, int count, long... mm) {
    ByteBuffer b = ByteBuffer.allocate(count * 4 + mm.length * 8).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = from; i < from + count; i++) {
      b.putInt(tokens[i]);
    }
    for (long h : mm) {
      b.putLong(h);
    }
    return b.array();
  }

  @Test
  void xxh3MatchesDynamoVector() {
    byte[] data = "test data".getBytes(StandardCharsets.UTF_8);
    assertEquals(u("13226331709069118873"), BlockHasher.xxh3(data, 1337));
  }

  @Test
  void tokens0to31BlockSize16() {
    long[] local = BlockHasher.localBlockHashes(range(0, 31), 32, 16, 1337, false, null);
    assertArrayEquals(new long[] {u("15310707395893867146"), u("15292316782987903195")}, local);
    long[] seq = BlockHasher.sequenceHashes(local);
    assertArrayEquals(new long[] {u("15310707395893867146"), u("13769157705258532664")}, seq);
    assertArrayEquals(new long[] {-3136036677815684470L, -4677586368451018952L}, seq);
  }

  @Test
  void tokens1to8BlockSize4() {
    long[] local = BlockHasher.localBlockHashes(range(1, 8), 8, 4, 1337, false, null);
    assertArrayEquals(new long[] {u("14643705804678351452"), u("16777012769546811212")}, local);
    assertArrayEquals(
        new long[] {u("14643705804678351452"), u("4945711292740353085")},
        BlockHasher.sequenceHashes(local));
  }

  @Test
  void loraSalt() {
    long seed = BlockHasher.saltSeed("adapter-a", null);
    assertEquals(u("8842669519798868182"), seed);
    assertArrayEquals(
        new long[] {u("6665157333201000639")},
        BlockHasher.localBlockHashes(range(0, 3), 4, 4, seed, false, null));
  }

  @Test
  void namespaceSalt() {
    long seed = BlockHasher.saltSeed(null, "tenant-a");
    assertEquals(u("1948188790972764086"), seed);
    assertArrayEquals(
        new long[] {u("17009624042690211646")},
        BlockHasher.localBlockHashes(range(0, 3), 4, 4, seed, false, null));
  }

  @Test
  void loraAndNamespaceUseDifferentDomains() {
    assertNotEquals(BlockHasher.saltSeed("x", null), BlockHasher.saltSeed(null, "x"));
    assertNotEquals(BlockHasher.saltSeed("x", null), BlockHasher.saltSeed(null, null));
    assertEquals(
        BlockHasher.saltSeed("adapter-a", null) + BlockHasher.saltSeed(null, "tenant-a") - 1337,
        BlockHasher.saltSeed("adapter-a", "tenant-a"));
  }

  @Test
  void emptyStringsAreAbsent() {
    assertEquals(1337L, BlockHasher.saltSeed("", ""));
    assertEquals(1337L, BlockHasher.saltSeed(null, null));
    assertEquals(BlockHasher.saltSeed("adapter-a", null), BlockHasher.saltSeed("adapter-a", ""));
  }

  @ParameterizedTest
  @ValueSource(ints = {11, 32, 64})
  void onlyCompleteBlocksAreHashed(int blockSize) {
    int[] tokens = range(0, 199);
    long[] local =
        BlockHasher.localBlockHashes(tokens, tokens.length, blockSize, 1337, false, null);
    assertEquals(200 / blockSize, local.length);
    for (int b = 0; b < local.length; b++) {
      assertEquals(BlockHasher.xxh3(le(tokens, b * blockSize, blockSize), 1337), local[b]);
    }
  }

  @Test
  void tokenCountLimitsTheInput() {
    int[] tokens = range(0, 31);
    assertArrayEquals(
        BlockHasher.localBlockHashes(range(0, 15), 16, 16, 1337, false, null),
        BlockHasher.localBlockHashes(tokens, 17, 16, 1337, false, null));
  }

  @Test
  void eagleWindowsOverlapByOneToken() {
    int[] tokens = range(0, 4);
    long[] local = BlockHasher.localBlockHashes(tokens, 5, 2, 1337, true, null);
    assertArrayEquals(
        new long[] {
          BlockHasher.xxh3(le(new int[] {0, 1, 2}, 0, 3), 1337),
          BlockHasher.xxh3(le(new int[] {2, 3, 4}, 0, 3), 1337)
        },
        local);
    assertEquals(1, BlockHasher.localBlockHashes(tokens, 4, 2, 1337, true, null).length);
    assertEquals(0, BlockHasher.localBlockHashes(tokens, 1, 2, 1337, true, null).length);
  }

  @Test
  void multimodalHashesAreAppendedSortedUnsigned() {
    int[] tokens = range(0, 7);
    long big = u("18000000000000000000");
    long[][] mm = {null, {big, 5L, 7L}};
    long[] local = BlockHasher.localBlockHashes(tokens, 8, 4, 99, false, mm);
    assertEquals(BlockHasher.xxh3(le(tokens, 0, 4), 99), local[0]);
    assertEquals(BlockHasher.xxh3(le(tokens, 4, 4, 5L, 7L, big), 99), local[1]);
    assertNotEquals(BlockHasher.localBlockHashes(tokens, 8, 4, 99, false, null)[1], local[1]);
  }

  @Test
  void largeTokenIdsAreUnsignedLittleEndian() {
    int[] tokens = {-1, 0x12345678, 151_643, 7};
    assertEquals(
        BlockHasher.xxh3(le(tokens, 0, 4), 1337),
        BlockHasher.localBlockHashes(tokens, 4, 4, 1337, false, null)[0]);
  }

  @Test
  void chainStepMatchesByteFormula() {
    ByteBuffer b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(-5L).putLong(42L);
    assertEquals(BlockHasher.xxh3(b.array(), 1337), BlockHasher.chain(-5L, 42L, new long[2]));
  }
}
