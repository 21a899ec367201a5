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
 * The seeded, pre-encoded KV-event workload of one benchmark publisher, so that nothing is encoded
 * while the clock runs.
 *
 * <p>Like a full GPU cache under LRU eviction, the rank holds a steady set of blocks: two chains A
 * and B of {@code chainBatches * blocksPerBatch} blocks each take turns. A prologue stores chain
 * A ({@code chainBatches} {@code BlockStored} batches, each extending the previous one, the
 * first from the root); then a cycle of {@code 4 * chainBatches} batches repeats for ever:
 * store the next batch of B, evict the deepest remaining batch of A (leaf first), ... until B is
 * complete and A gone, then the same with the roles swapped. Every batch carries exactly
 * {@code blocksPerBatch} blocks, every store finds its parent, and after the prologue the rank
 * holds between {@code chainBatches * blocksPerBatch} and that plus {@code blocksPerBatch}
 * blocks. Tokens are random ids below {@value #VOCAB} drawn from {@code seed} and the publisher
 * index, so publishers share no prefix; engine hashes are the public sequence hashes, as the mock
 * engines send them.
 *
 * <p>Messages: each published message (one ZMQ message, one {@link KvEventBatch}) carries
 * {@code eventsPerBatch} consecutive events of that sequence, as vLLM publishes one message per
 * scheduler step with every event of the step. With 1 (the default) a message is one event of
 * {@code blocksPerBatch} blocks; with E it carries E events and {@code E * blocksPerBatch} blocks.
 * E must divide {@code chainBatches}, so that the prologue and the cycle are whole messages.
 *
 * <p>Immutable after construction and safe to share between threads; payload arrays must not be
 * modified (they are handed to publishers as they are).
 */
public final class IngestWorkload {

  /** Token ids are drawn from {@code [0, VOCAB)}, the size of a large LLM vocabulary. */
  public static final int VOCAB = 151_936;

  /** Messages in the prologue (the cycle has four times as many). */
  private final int chainBatches;

  /** Blocks per event. */
  private final int blocksPerEvent;

  private final int eventsPerBatch;
  private final byte[][] payloads;
  private final List<KvEventBatch> batches;

  private IngestWorkload(
      int chainEvents,
      int blocksPerEvent,
      int eventsPerBatch,
      List<KvEventBatch> events,
      WireFormat wire) {
    this.chainBatches = chainEvents / eventsPerBatch;
    this.blocksPerEvent = blocksPerEvent;
    this.eventsPerBatch = eventsPerBatch;
    List<KvEventBatch> grouped = new ArrayList<>(events.size() / eventsPerBatch);
    for (int i = 0; i < events.size(); i += eventsPerBatch) {
      List<KvEvent> step = new ArrayList<>(eventsPerBatch);
      for (int k = i; k < i + eventsPerBatch; k++) {
        step.addAll(events.get(k).events());
      }
      KvEventBatch first = events.get(i);
      grouped.add(new KvEventBatch(first.timestamp(), step, first.dpRank()));
    }
    this.batches = List.copyOf(grouped);
    this.payloads = new byte[batches.size()][];
    for (int i = 0; i < payloads.length; i++) {
      payloads[i] = KvEventEncoder.encode(batches.get(i), wire);
    }
  }

  /**
   * Builds and encodes the prologue and cycle of publisher {@code publisher}.
   *
   * @param seed workload seed (the same seed gives the same bytes)
   * @param dpRank the {@code data_parallel_rank} written into every batch
   * @param chainBatches store batches per chain (positive): the rank holds about
   *     {@code chainBatches * blocksPerBatch} blocks
   * @param blocksPerBatch blocks per batch (positive)
   * @param blockSize tokens per block (positive)
   */
  public static IngestWorkload cycle(
      long seed,
      int publisher,
      int dpRank,
      int chainBatches,
      int blocksPerBatch,
      int blockSize,
      WireFormat wire) {
    return cycle(seed, publisher, dpRank, chainBatches, blocksPerBatch, 1, blockSize, wire);
  }

  /**
   * As {@link #cycle(long, int, int, int, int, int, WireFormat)}, with {@code eventsPerBatch}
   * events of {@code blocksPerBatch} blocks in every message ({@code eventsPerBatch} divides
   * {@code chainBatches}).
   */
  public static IngestWorkload cycle(
      long seed,
      int publisher,
      int dpRank,
      int chainBatches,
      int blocksPerBatch,
      int eventsPerBatch,
      int blockSize,
      WireFormat wire) {
    if (chainBatches < 1 || blocksPerBatch < 1 || blockSize < 1 || eventsPerBatch < 1) {
      throw new IllegalArgumentException(
          "chainBatches, blocksPerBatch, eventsPerBatch and blockSize must be positive");
    }
    if (chainBatches % eventsPerBatch != 0) {
      throw new IllegalArgumentException(
          "eventsPerBatch " + eventsPerBatch + " must divide chainBatches " + chainBatches);
    }
    SplittableRandom rnd = new SplittableRandom(seed * 1_000_003L + publisher);
    Chain a = Chain.random(rnd, chainBatches * blocksPerBatch, blockSize);
    Chain b = Chain.random(rnd, chainBatches * blocksPerBatch, blockSize);
    double ts = System.currentTimeMillis() / 1000.0;
    List<KvEventBatch> out = new ArrayList<>(5 * chainBatches);
    for (int k = 0; k < chainBatches; k++) {
      out.add(a.store(k, blocksPerBatch, blockSize, ts, dpRank));
    }
    for (int k = 0; k < chainBatches; k++) {
      out.add(b.store(k, blocksPerBatch, blockSize, ts, dpRank));
      out.add(a.remove(chainBatches - 1 - k, blocksPerBatch, ts, dpRank));
    }
    for (int k = 0; k < chainBatches; k++) {
      out.add(a.store(k, blocksPerBatch, blockSize, ts, dpRank));
      out.add(b.remove(chainBatches - 1 - k, blocksPerBatch, ts, dpRank));
    }
    return new IngestWorkload(chainBatches, blocksPerBatch, eventsPerBatch, out, wire);
  }

  /** Messages in the prologue plus one cycle ({@code 5 * chainBatches / eventsPerBatch}). */
  public int size() {
    return payloads.length;
  }

  /** The encoded payload of workload batch {@code n} (any n >= 0; after the prologue the cycle repeats). */
  public byte[] payload(long n) {
    return payloads[index(n)];
  }

  /** Workload batch {@code n} before encoding, for checks. */
  public KvEventBatch batch(long n) {
    return batches.get(index(n));
  }

  private int index(long n) {
    if (n < chainBatches) {
      return (int) n;
    }
    return chainBatches + (int) ((n - chainBatches) % (4L * chainBatches));
  }

  /** Blocks carried by every message (all its events). */
  public int blocksPerBatch() {
    return blocksPerEvent * eventsPerBatch;
  }

  /** Events carried by every message. */
  public int eventsPerBatch() {
    return eventsPerBatch;
  }

  /** Blocks stored by the first {@code n} messages (the rest of the blocks are removals). */
  public long storedBlocks(long n) {
    long events = n * eventsPerBatch;
    long chainEvents = (long) chainBatches * eventsPerBatch;
    if (events <= chainEvents) {
      return events * blocksPerEvent;
    }
    long m = events - chainEvents; // in the cycle, stores sit at even positions
    return (chainEvents + m / 2 + m % 2) * blocksPerEvent;
  }

  /** Blocks (stored plus removed) carried by the first {@code n} messages. */
  public long blocks(long n) {
    return n * blocksPerBatch();
  }

  /** One random chain: its tokens and engine (sequence) hashes. */
  private record Chain(int[] tokens, long[] hashes) {

    static Chain random(SplittableRandom rnd, int blocks, int blockSize) {
      int[] tokens = new int[blocks * blockSize];
      for (int i = 0; i < tokens.length; i++) {
        tokens[i] = rnd.nextInt(VOCAB);
      }
      return new Chain(
          tokens,
          BlockHasher.sequenceHashes(
              BlockHasher.localBlockHashes(
                  tokens,
                  tokens.length,
                  blockSize,
                  BlockHasher.saltSeed(null, null),
                  false,
                  null)));
    }

    /** Store batch {@code k}: blocks {@code [k*n, (k+1)*n)}, extending block {@code k*n - 1}. */
    KvEventBatch store(int k, int n, int blockSize, double ts, int dpRank) {
      int from = k * n;
      int to = from + n;
      KvEvent e =
          new BlockStored(
              Arrays.copyOfRange(hashes, from, to),
              from > 0,
              from > 0 ? hashes[from - 1] : 0,
              Arrays.copyOfRange(tokens, from * blockSize, to * blockSize),
              blockSize,
              "GPU",
              null,
              null,
              null,
              0,
              "full_attention",
              null);
      return new KvEventBatch(ts, List.of(e), dpRank);
    }

    /** Removal of store batch {@code k}'s blocks, deepest first. */
    KvEventBatch remove(int k, int n, double ts, int dpRank) {
      long[] evicted = new long[n];
      for (int i = 0; i < n; i++) {
        evicted[i] = hashes[(k + 1) * n - 1 - i];
      }
      return new KvEventBatch(ts, List.of(new BlockRemoved(evicted, "GPU", 0, null)), dpRank);
    }
  }
}
