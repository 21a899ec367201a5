package io.kvselect.bench;

import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import java.util.SplittableRandom;

/**
 * Seeded synthetic KV workload shared by the index benchmarks: {@code ranks} worker ranks each
 * hold {@code sequencesPerRank} cached sequences of {@code blocks} blocks. A sequence is a shared
 * prefix of {@code sharedBlocks} blocks (one of {@code prefixes} "system prompts", picked with a
 * skew so some prefixes are hot) followed by a suffix unique to that sequence. External hashes are
 * the sequence hashes of the blocks, as an engine publishing Dynamo-style hashes would send.
 */
final class IndexWorkload {

  final int ranks;
  final int blocks;
  final int sharedBlocks;
  final long[][] prefixes;
  private final SplittableRandom rnd;

  IndexWorkload(long seed, int ranks, int blocks, int sharedBlocks, int prefixCount) {
    this.rnd = new SplittableRandom(seed);
    this.ranks = ranks;
    this.blocks = blocks;
    this.sharedBlocks = sharedBlocks;
    this.prefixes = new long[prefixCount][sharedBlocks];
    for (long[] p : prefixes) {
      for (int i = 0; i < p.length; i++) {
        p[i] = rnd.nextLong();
      }
    }
  }

  /** A sequence: a skewed pick of a shared prefix, then fresh random blocks. */
  long[] sequence() {
    long[] s = new long[blocks];
    long[] p = prefixes[skewedPrefix()];
    System.arraycopy(p, 0, s, 0, sharedBlocks);
    for (int i = sharedBlocks; i < blocks; i++) {
      s[i] = rnd.nextLong();
    }
    return s;
  }

  /** A query sharing the first {@code prefixBlocks} blocks of {@code stored}, then unseen blocks. */
  long[] divergeAfter(long[] stored, int prefixBlocks) {
    long[] q = new long[blocks];
    System.arraycopy(stored, 0, q, 0, prefixBlocks);
    for (int i = prefixBlocks; i < blocks; i++) {
      q[i] = rnd.nextLong();
    }
    return q;
  }

  int nextInt(int bound) {
    return rnd.nextInt(bound);
  }

  private int skewedPrefix() {
    double u = rnd.nextDouble();
    return (int) (prefixes.length * u * u);
  }

  static WorkerRank rank(int i) {
    return new WorkerRank(i / 8, i % 8);
  }

  /** Stores {@code perRank} sequences for every rank; returns one stored sequence per rank. */
  long[][] populate(BlockIndex index, int perRank) {
    return populate(index, perRank, false);
  }

  /**
   * Like {@link #populate(BlockIndex, int)}; with {@code opaqueExternals} the external hashes are
   * random instead of the public sequence hashes, as an engine with its own block hashing sends.
   */
  long[][] populate(BlockIndex index, int perRank, boolean opaqueExternals) {
    long[][] sample = new long[ranks][];
    for (int r = 0; r < ranks; r++) {
      WorkerRank rank = rank(r);
      for (int j = 0; j < perRank; j++) {
        long[] local = sequence();
        long[] ext = BlockHasher.sequenceHashes(local);
        if (opaqueExternals) {
          for (int i = 0; i < ext.length; i++) {
            ext[i] = rnd.nextLong();
          }
        }
        index.store(rank, StorageTier.DEVICE, false, 0L, ext, local);
        sample[r] = local;
      }
    }
    return sample;
  }
}
