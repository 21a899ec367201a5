package io.kvselect.core.hash;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** Argument bounds and the multimodal scratch-buffer path of {@link BlockHasher}. */
class BlockHasherBoundsTest {

  private static int[] range(int fromInclusive, int toInclusive) {
    return IntStream.rangeClosed(fromInclusive, toInclusive).toArray();
  }

  /** Reference encoding: tokens as u32 LE, then the given mm hashes (already sorted) as u64 LE. */
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
  void nonPositiveBlockSizeIsRejected() {
    assertThrows(IllegalArgumentException.class, () -> BlockHasher.blockCount(8, 0, false));
    assertThrows(IllegalArgumentException.class, () -> BlockHasher.blockCount(8, -4, false));
    assertThrows(
        IllegalArgumentException.class,
        () -> BlockHasher.localBlockHashes(range(0, 7), 8, 0, 1337, false, null));
  }

  @Test
  void blockCountNeverNegative() {
    assertEquals(0, BlockHasher.blockCount(-8, 4, false));
    assertEquals(0, BlockHasher.blockCount(-7, 4, true));
    assertEquals(0, BlockHasher.blockCount(0, 4, false));
    assertEquals(0, BlockHasher.blockCount(3, 4, false));
    assertEquals(1, BlockHasher.blockCount(4, 4, false));
    assertEquals(0, BlockHasher.blockCount(4, 4, true));
    assertEquals(1, BlockHasher.blockCount(5, 4, true));
    assertEquals(1, BlockHasher.blockCount(1, 1, false));
  }

  @Test
  void tokenCountMayBeZeroOrTheWholeArray() {
    int[] tokens = range(0, 7);
    assertEquals(0, BlockHasher.localBlockHashes(tokens, 0, 4, 1337, false, null).length);
    assertEquals(0, BlockHasher.localBlockHashes(new int[0], 0, 4, 1337, false, null).length);
    long[] all = BlockHasher.localBlockHashes(tokens, tokens.length, 4, 1337, false, null);
    assertArrayEquals(
        new long[] {
          BlockHasher.xxh3(le(tokens, 0, 4), 1337), BlockHasher.xxh3(le(tokens, 4, 4), 1337)
        },
        all);
  }

  @Test
  void tokenCountOutsideTheArrayIsRejected() {
    int[] tokens = range(0, 7);
    assertThrows(
        IllegalArgumentException.class,
        () -> BlockHasher.localBlockHashes(tokens, -1, 4, 1337, false, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> BlockHasher.localBlockHashes(tokens, 9, 4, 1337, false, null));
  }

  @Test
  void sequenceOfNothingIsEmpty() {
    assertArrayEquals(new long[0], BlockHasher.sequenceHashes(new long[0]));
  }

  @Test
  void sequenceOfOneBlockIsItsLocalHash() {
    assertArrayEquals(new long[] {-77L}, BlockHasher.sequenceHashes(new long[] {-77L}));
  }

  @Test
  void multimodalArrayShorterThanTheBlocksLeavesLaterBlocksPlain() {
    int[] tokens = range(0, 11);
    long[][] mm = {{9L}};
    long[] local = BlockHasher.localBlockHashes(tokens, 12, 4, 1337, false, mm);
    assertArrayEquals(
        new long[] {
          BlockHasher.xxh3(le(tokens, 0, 4, 9L), 1337),
          BlockHasher.xxh3(le(tokens, 4, 4), 1337),
          BlockHasher.xxh3(le(tokens, 8, 4), 1337)
        },
        local);
  }

  @Test
  void manyMultimodalHashesFillTheBufferExactly() {
    int[] tokens = range(100, 107);
    long[] many = LongStream.rangeClosed(1, 40).toArray();
    long[] reversed = LongStream.rangeClosed(1, 40).map(i -> 41 - i).toArray();
    long[] local = BlockHasher.localBlockHashes(tokens, 8, 4, 5, false, new long[][] {reversed});
    assertEquals(BlockHasher.xxh3(le(tokens, 0, 4, many), 5), local[0]);
    assertEquals(BlockHasher.xxh3(le(tokens, 4, 4), 5), local[1]);
  }

  @Test
  void aLaterBlockNeedingMoreScratchThanAnEarlierOneIsHashedWhole() {
    int[] tokens = range(0, 11);
    long[] few = {3L};
    long[] many = LongStream.rangeClosed(1, 20).toArray();
    long[] local =
        BlockHasher.localBlockHashes(tokens, 12, 4, 1337, false, new long[][] {few, {}, many});
    assertArrayEquals(
        new long[] {
          BlockHasher.xxh3(le(tokens, 0, 4, few), 1337),
          BlockHasher.xxh3(le(tokens, 4, 4), 1337),
          BlockHasher.xxh3(le(tokens, 8, 4, many), 1337)
        },
        local);
  }

  @Test
  void eagleWindowsWithMultimodalHashes() {
    int[] tokens = range(0, 8);
    long[] mm = LongStream.rangeClosed(1, 10).toArray();
    long[] local = BlockHasher.localBlockHashes(tokens, 9, 4, 7, true, new long[][] {mm, mm});
    assertArrayEquals(
        new long[] {
          BlockHasher.xxh3(le(tokens, 0, 5, mm), 7), BlockHasher.xxh3(le(tokens, 4, 5, mm), 7)
        },
        local);
  }

  @Test
  void seedZeroAndChainSeedHashLikeAnyOtherSeed() {
    byte[] data = le(range(1, 4), 0, 4);
    assertEquals(
        BlockHasher.xxh3(data, 0L),
        BlockHasher.localBlockHashes(range(1, 4), 4, 4, 0L, false, null)[0]);
    assertEquals(
        BlockHasher.xxh3(data, BlockHasher.CHAIN_SEED),
        BlockHasher.localBlockHashes(range(1, 4), 4, 4, BlockHasher.CHAIN_SEED, false, null)[0]);
  }
}
