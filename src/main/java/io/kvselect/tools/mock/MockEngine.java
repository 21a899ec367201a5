package io.kvselect.tools.mock;

import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One mock inference engine: a prefix cache per DP rank and the KV events a vLLM engine would
 * publish for the same traffic. Engine block hashes are Dynamo's public sequence hashes (seed 1337,
 * salted by LoRA name and cache salt), as in Dynamo's mocker, so a router can recompute them.
 *
 * <p>A request is handled in two steps: {@link #admit} looks the prompt up (touching the cached
 * prefix) and prices it; {@link #commit}, after the modelled prefill, stores the prompt's complete
 * blocks and returns the batch to publish: one {@code BlockRemoved} per evicted block, then one
 * {@code BlockStored} per run of newly stored consecutive blocks (parent = the previous block of
 * the chain, nil at the root; medium {@code "GPU"}).
 *
 * <p>Not thread-safe: owned by the event-loop thread of the engine's verticle.
 */
public final class MockEngine {

  /** Medium of every block of the mock. */
  public static final String MEDIUM = "GPU";

  /** Attention kind reported with stores in map form. */
  public static final String SPEC_KIND = "full_attention";

  /** A prompt: token ids and the hash salts of the request. */
  public record Prompt(int[] tokens, String loraName, String cacheSalt) {}

  /** An admitted request: its rank, block chain and modelled cost. */
  public record Plan(
      int dpRank,
      Prompt prompt,
      long[] chain,
      int cachedTokens,
      int uncachedTokens,
      double prefillMs,
      double decodeMs) {}

  private final int blockSize;
  private final TimingModel timing;
  private final RankCache[] ranks;
  private int nextRank;

  public MockEngine(int dpSize, int numGpuBlocks, int blockSize, TimingModel timing) {
    if (dpSize <= 0 || blockSize <= 0) {
      throw new IllegalArgumentException("dpSize and blockSize must be positive");
    }
    this.blockSize = blockSize;
    this.timing = timing;
    this.ranks = new RankCache[dpSize];
    for (int r = 0; r < dpSize; r++) {
      ranks[r] = new RankCache(numGpuBlocks);
    }
  }

  /** The sequence hashes of the prompt's complete blocks. */
  public long[] chain(Prompt p) {
    long seed = BlockHasher.saltSeed(p.loraName(), p.cacheSalt());
    return BlockHasher.sequenceHashes(
        BlockHasher.localBlockHashes(p.tokens(), p.tokens().length, blockSize, seed, false, null));
  }

  /**
   * Looks {@code p} up on {@code dpRank} (or, when null, on the rank with the longest cached
   * prefix, ties taken in turn) and touches its cached prefix.
   *
   * @throws IllegalArgumentException for a rank out of range or a prompt larger than a rank's cache
   */
  public Plan admit(Prompt p, Integer dpRank, int outputTokens) {
    long[] chain = chain(p);
    int rank = dpRank == null ? pickRank(chain) : dpRank;
    if (rank < 0 || rank >= ranks.length) {
      throw new IllegalArgumentException("dp_rank must be in [0, " + ranks.length + "): " + rank);
    }
    RankCache cache = ranks[rank];
    if (chain.length > cache.capacity()) {
      throw new IllegalArgumentException(
          "token_ids needs "
              + chain.length
              + " blocks, more than num_gpu_blocks "
              + cache.capacity());
    }
    int hit = cache.cachedPrefix(chain);
    cache.touchPrefix(chain, hit);
    int cached = hit * blockSize;
    int uncached = p.tokens().length - cached;
    return new Plan(
        rank,
        p,
        chain,
        cached,
        uncached,
        timing.prefillMs(uncached),
        timing.decodeMs(outputTokens));
  }

  /** Stores the plan's blocks; the batch to publish on its rank, or null when nothing changed. */
  public KvEventBatch commit(Plan plan, double timestamp) {
    RankCache.StoreResult r = ranks[plan.dpRank()].store(plan.chain());
    List<KvEvent> events = new ArrayList<>();
    for (long h : r.evicted()) {
      events.add(new BlockRemoved(new long[] {h}, MEDIUM, 0, null));
    }
    boolean[] inserted = r.inserted();
    int i = 0;
    while (i < inserted.length) {
      if (!inserted[i]) {
        i++;
        continue;
      }
      int start = i;
      while (i < inserted.length && inserted[i]) {
        i++;
      }
      events.add(stored(plan, start, i));
    }
    return events.isEmpty()
        ? null
        : new KvEventBatch(timestamp, List.copyOf(events), plan.dpRank());
  }

  private BlockStored stored(Plan plan, int from, int to) {
    Prompt p = plan.prompt();
    long[] hashes = Arrays.copyOfRange(plan.chain(), from, to);
    int[] tokens = Arrays.copyOfRange(p.tokens(), from * blockSize, to * blockSize);
    boolean hasParent = from > 0;
    long parent = hasParent ? plan.chain()[from - 1] : 0L;
    return new BlockStored(
        hashes,
        hasParent,
        parent,
        tokens,
        blockSize,
        MEDIUM,
        p.loraName(),
        p.cacheSalt(),
        null,
        0,
        SPEC_KIND,
        null);
  }

  /** Empties rank {@code rank}; the {@code AllBlocksCleared} batch to publish on it. */
  public KvEventBatch clear(int rank, double timestamp) {
    ranks[rank].clear();
    return new KvEventBatch(timestamp, List.of(new AllBlocksCleared()), rank);
  }

  /** Empties every rank silently, as a process restart does. */
  public void restart() {
    for (RankCache c : ranks) {
      c.clear();
    }
  }

  /** Number of blocks cached on {@code rank}. */
  public int cachedBlocks(int rank) {
    return ranks[rank].size();
  }

  public int dpSize() {
    return ranks.length;
  }

  public int blockSize() {
    return blockSize;
  }

  public TimingModel timing() {
    return timing;
  }

  private int pickRank(long[] chain) {
    int best = -1;
    int bestHit = -1;
    for (int k = 0; k < ranks.length; k++) {
      int r = (nextRank + k) % ranks.length;
      int hit = ranks[r].cachedPrefix(chain);
      if (hit > bestHit) {
        best = r;
        bestHit = hit;
      }
    }
    nextRank = (best + 1) % ranks.length;
    return best;
  }
}
