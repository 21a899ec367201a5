package io.kvselect.core.hash;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import net.openhft.hashing.LongHashFunction;

/**
 * Dynamo-compatible KV block hashing (XXH3-64): the request salt, the per-block
 * {@code LocalBlockHash} and the rolling {@code SequenceHash} chain.
 *
 * <p>Invariants, bit-for-bit with Dynamo's {@code compute_salt_hash}, {@code compute_block_hash}
 * and sequence chain:
 *
 * <ul>
 *   <li>seed = 1337 + xxh3(utf8(lora), 0) + xxh3(utf8(namespace), 1), wrapping; a null or empty
 *       string is absent;
 *   <li>a block's bytes are its tokens as u32 little-endian, then (if any) the block's multimodal
 *       {@code mm_hash} values sorted ascending (as unsigned) as u64 little-endian; only complete
 *       blocks are hashed; eagle windows are {@code blockSize + 1} tokens with stride
 *       {@code blockSize};
 *   <li>{@code seq[0] = local[0]}, {@code seq[i] = xxh3(LE64(seq[i-1]) || LE64(local[i]), 1337)}.
 * </ul>
 *
 * <p>Hashes are unsigned 64-bit values carried in {@code long}s. Every method is stateless and
 * thread-safe. Cost is O(tokens) per call; on little-endian hosts token blocks are hashed straight
 * from the {@code int[]} (the memory layout equals the u32 LE byte stream), so the only
 * allocations per call are the result array and the seeded hash function; blocks carrying
 * multimodal hashes go through a byte array of their own (with the sorted copy of their hashes).
 */
public final class BlockHasher {

  /** Seed of the salt and of the sequence chain ({@code XXH3_SEED} in Dynamo). */
  public static final long CHAIN_SEED = 1337L;

  private static final LongHashFunction CHAIN = LongHashFunction.xx3(CHAIN_SEED);
  private static final LongHashFunction SEED0 = LongHashFunction.xx3(0L);
  private static final LongHashFunction SEED1 = LongHashFunction.xx3(1L);
  private static final boolean NATIVE_LE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

  private BlockHasher() {}

  /** XXH3-64 of {@code data} with a 64-bit {@code seed}. */
  public static long xxh3(byte[] data, long seed) {
    return hashFunction(seed).hashBytes(data);
  }

  /** The request salt: the seed of every local block hash of a request. */
  public static long saltSeed(String loraName, String cacheNamespace) {
    long seed = CHAIN_SEED;
    if (loraName != null && !loraName.isEmpty()) {
      seed += SEED0.hashBytes(loraName.getBytes(StandardCharsets.UTF_8));
    }
    if (cacheNamespace != null && !cacheNamespace.isEmpty()) {
      seed += SEED1.hashBytes(cacheNamespace.getBytes(StandardCharsets.UTF_8));
    }
    return seed;
  }

  /** Number of complete blocks (or eagle windows) in {@code tokenCount} tokens. */
  public static int blockCount(int tokenCount, int blockSize, boolean eagle) {
    if (blockSize <= 0) {
      throw new IllegalArgumentException("blockSize must be positive: " + blockSize);
    }
    int usable = eagle ? tokenCount - 1 : tokenCount;
    return Math.max(usable, 0) / blockSize;
  }

  /**
   * The {@code LocalBlockHash} of every complete block of {@code tokens[0..tokenCount)}.
   *
   * @param mmHashesPerBlock nullable; entry {@code i} (nullable or empty) holds the {@code mm_hash}
   *     values of block {@code i}, in any order
   */
  public static long[] localBlockHashes(
      int[] tokens,
      int tokenCount,
      int blockSize,
      long seed,
      boolean eagle,
      long[][] mmHashesPerBlock) {
    if (tokenCount < 0 || tokenCount > tokens.length) {
      throw new IllegalArgumentException("tokenCount out of range: " + tokenCount);
    }
    int blocks = blockCount(tokenCount, blockSize, eagle);
    int window = eagle ? blockSize + 1 : blockSize;
    long[] out = new long[blocks];
    LongHashFunction fn = hashFunction(seed);
    for (int b = 0; b < blocks; b++) {
      int from = b * blockSize;
      long[] mm =
          mmHashesPerBlock != null && b < mmHashesPerBlock.length ? mmHashesPerBlock[b] : null;
      boolean hasMm = mm != null && mm.length > 0;
      if (!hasMm && NATIVE_LE) {
        out[b] = fn.hashInts(tokens, from, window);
        continue;
      }
      // One array per block on this path, like the sorted copy below: it runs only for blocks
      // with multimodal hashes (or on a big-endian JVM), where reusing a buffer saved nothing.
      byte[] scratch = new byte[window * 4 + (hasMm ? mm.length * 8 : 0)];
      int p = 0;
      for (int t = from; t < from + window; t++) {
        p = putLe(scratch, p, tokens[t], 4);
      }
      if (hasMm) {
        long[] sorted = mm.clone();
        sortUnsigned(sorted);
        for (long h : sorted) {
          p = putLe(scratch, p, h, 8);
        }
      }
      out[b] = fn.hashBytes(scratch, 0, p);
    }
    return out;
  }

  /** The sequence chain of {@code localHashes}; see the class invariants. */
  public static long[] sequenceHashes(long[] localHashes) {
    long[] seq = new long[localHashes.length];
    if (seq.length == 0) {
      return seq;
    }
    seq[0] = localHashes[0];
    long[] pair = new long[2];
    for (int i = 1; i < seq.length; i++) {
      seq[i] = chain(seq[i - 1], localHashes[i], pair);
    }
    return seq;
  }

  /**
   * One chain step {@code xxh3(LE64(parent) || LE64(local), 1337)}. {@code pair} is a caller-owned
   * scratch array of length 2, so the hot path allocates nothing.
   */
  public static long chain(long parent, long local, long[] pair) {
    if (NATIVE_LE) {
      pair[0] = parent;
      pair[1] = local;
      return CHAIN.hashLongs(pair, 0, 2);
    }
    byte[] b = new byte[16];
    putLe(b, 0, parent, 8);
    putLe(b, 8, local, 8);
    return CHAIN.hashBytes(b);
  }

  private static LongHashFunction hashFunction(long seed) {
    if (seed == CHAIN_SEED) {
      return CHAIN;
    }
    return seed == 0L ? SEED0 : LongHashFunction.xx3(seed);
  }

  private static int putLe(byte[] b, int p, long v, int width) {
    for (int i = 0; i < width; i++) {
      b[p + i] = (byte) (v >>> (8 * i));
    }
    return p + width;
  }

  private static void sortUnsigned(long[] a) {
    for (int i = 0; i < a.length; i++) {
      a[i] ^= Long.MIN_VALUE;
    }
    Arrays.sort(a);
    for (int i = 0; i < a.length; i++) {
      a[i] ^= Long.MIN_VALUE;
    }
  }
}
