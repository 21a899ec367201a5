package io.kvselect.tools.loadgen;

import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.tools.mock.KvEventEncoder;
import io.kvselect.tools.mock.WireFormat;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The seeded, pre-encoded KV-event workload of one benchmark publisher: a cycle of batches that is
 * sent over and over, so that nothing is encoded while the clock runs.
 *
 * <p>One cycle grows one chain of {@code storesPerCycle * blocksPerBatch} blocks with
 * {@code storesPerCycle} {@code BlockStored} batches (each extending the previous one, the first
 * from the root), then evicts it leaf first with as many {@code BlockRemoved} batches of
 * {@code blocksPerBatch} hashes each. Every batch thus carries exactly {@code blocksPerBatch}
 * blocks, the index holds at most one chain per rank, and a replayed cycle stores the same chain
 * again after it was fully removed (every store finds its parent). Tokens are random ids below
 * {@value #VOCAB} drawn from {@code seed} and the publisher index, so publishers share no prefix;
 * engine hashes are the public sequence hashes, as the mock engines send them.
 *
 * <p>Immutable after construction and safe to share between threads; payload arrays must not be
 * modified (they are handed to publishers as they are).
 */
public final class IngestWorkload {

  /** Token ids are drawn from {@code [0, VOCAB)}, the size of a large LLM vocabulary. */
  public static final int VOCAB = 151_936;

  private final int storesPerCycle;
  private final int blocksPerBatch;
  private final byte[][] payloads;
  private final List<KvEventBatch> batches;

  private IngestWorkload(int storesPerCycle, int blocksPerBatch, List<KvEventBatch> batches,
      WireFormat wire) {
    this.storesPerCycle = storesPerCycle;
    this.blocksPerBatch = blocksPerBatch;
    this.batches = List.copyOf(batches);
    this.payloads = new byte[batches.size()][];
    for (int i = 0; i < payloads.length; i++) {
      payloads[i] = KvEventEncoder.encode(batches.get(i), wire);
    }
  }

  /**
   * Builds and encodes the cycle of publisher {@code publisher}.
   *
   * @param seed workload seed (the same seed gives the same bytes)
   * @param dpRank the {@code data_parallel_rank} written into every batch
   * @param storesPerCycle store batches per cycle (positive); the cycle has twice as many batches
   * @param blocksPerBatch blocks per batch (positive)
   * @param blockSize tokens per block (positive)
   */
  public static IngestWorkload cycle(long seed, int publisher, int dpRank, int storesPerCycle,
      int blocksPerBatch, int blockSize, WireFormat wire) {
    if (storesPerCycle < 1 || blocksPerBatch < 1 || blockSize < 1) {
      throw new IllegalArgumentException("storesPerCycle, blocksPerBatch and blockSize must be positive");
    }
    SplittableRandom rnd = new SplittableRandom(seed * 1_000_003L + publisher);
    int blocks = storesPerCycle * blocksPerBatch;
    int[] tokens = new int[blocks * blockSize];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = rnd.nextInt(VOCAB);
    }
    long[] chain = BlockHasher.sequenceHashes(BlockHasher.localBlockHashes(tokens, tokens.length,
        blockSize, BlockHasher.saltSeed(null, null), false, null));
    double ts = System.currentTimeMillis() / 1000.0;
    List<KvEventBatch> out = new ArrayList<>(2 * storesPerCycle);
    for (int k = 0; k < storesPerCycle; k++) {
      int from = k * blocksPerBatch;
      int to = from + blocksPerBatch;
      KvEvent stored = new BlockStored(Arrays.copyOfRange(chain, from, to), from > 0,
          from > 0 ? chain[from - 1] : 0, Arrays.copyOfRange(tokens, from * blockSize, to * blockSize),
          blockSize, "GPU", null, null, null, 0, "full_attention", null);
      out.add(new KvEventBatch(ts, List.of(stored), dpRank));
    }
    for (int k = storesPerCycle - 1; k >= 0; k--) {
      long[] evicted = new long[blocksPerBatch];
      for (int i = 0; i < blocksPerBatch; i++) {
        evicted[i] = chain[(k + 1) * blocksPerBatch - 1 - i];
      }
      out.add(new KvEventBatch(ts, List.of(new BlockRemoved(evicted, "GPU", 0, null)), dpRank));
    }
    return new IngestWorkload(storesPerCycle, blocksPerBatch, out, wire);
  }

  /** Batches per cycle ({@code 2 * storesPerCycle}). */
  public int size() {
    return payloads.length;
  }

  /** The encoded payload of workload batch {@code n} (any n >= 0; the cycle repeats). */
  public byte[] payload(long n) {
    return payloads[(int) (n % payloads.length)];
  }

  /** The batch before encoding, for checks: index within one cycle. */
  public KvEventBatch batch(int i) {
    return batches.get(i);
  }

  /** Blocks carried by every batch. */
  public int blocksPerBatch() {
    return blocksPerBatch;
  }

  /** Blocks stored by the first {@code n} workload batches (the rest of the blocks are removals). */
  public long storedBlocks(long n) {
    long cycles = n / payloads.length;
    long rest = n % payloads.length;
    return (cycles * storesPerCycle + Math.min(rest, storesPerCycle)) * blocksPerBatch;
  }

  /** Blocks (stored plus removed) carried by the first {@code n} workload batches. */
  public long blocks(long n) {
    return n * blocksPerBatch;
  }
}
