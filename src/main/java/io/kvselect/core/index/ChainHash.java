package io.kvselect.core.index;

import io.kvselect.core.hash.BlockHasher;

/**
 * {@link BlockHasher#chain} specialised for the index's hot loops: XXH3-64 with seed 1337 over
 * the 16 bytes {@code LE64(parent) || LE64(local)}, which is XXH3's 9-16-byte path (two 64-bit
 * reads xored with fixed words of the default secret, one 64x64->128 multiply folded, the
 * avalanche), written out on two longs so it needs no byte access, no scratch array and no call
 * through a hash-function object. Equal to {@link BlockHasher#chain} for every input (a property
 * test checks it). Stateless and thread-safe; O(1).
 */
final class ChainHash {

  private static final long SEED = 1337L;

  /** {@code (readLE64(kSecret + 24) ^ readLE64(kSecret + 32)) + seed}. */
  private static final long BITFLIP1 = (0x1f67b3b7a4a44072L ^ 0x78e5c0cc4ee679cbL) + SEED;

  /** {@code (readLE64(kSecret + 40) ^ readLE64(kSecret + 48)) - seed}. */
  private static final long BITFLIP2 = (0x2172ffcc7dd05a82L ^ 0x8e2443f7744608b8L) - SEED;

  private static final long PRIME_MX1 = 0x165667919E3779F9L;

  private ChainHash() {}

  /** The chain hash of {@code local} under {@code parent}. */
  static long chain(long parent, long local) {
    long lo = parent ^ BITFLIP1;
    long hi = local ^ BITFLIP2;
    long productLow = lo * hi;
    long productHigh = Math.multiplyHigh(lo, hi) + ((lo >> 63) & hi) + ((hi >> 63) & lo);
    long acc = 16 + Long.reverseBytes(lo) + hi + (productLow ^ productHigh);
    acc ^= acc >>> 37;
    acc *= PRIME_MX1;
    return acc ^ (acc >>> 32);
  }
}
