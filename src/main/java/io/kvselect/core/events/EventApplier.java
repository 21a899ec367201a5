package io.kvselect.core.events;

import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.Arrays;

/**
 * Applies one decoded batch of one rank to a {@link BlockIndex}, with Dynamo's event semantics
 * ({@code zmq_wire/convert.rs} and the radix tree's apply).
 *
 * <ul>
 *   <li><b>Filters</b> (event dropped): {@code locality} set and not {@code LOCAL}; a KV-cache group
 *       that is not the main attention group ({@code kv_cache_spec_kind} other than
 *       {@code full_attention}, {@code mla_attention}, {@code sink_full_attention}; without a kind,
 *       a {@code group_idx} other than 0).
 *   <li><b>BlockStored</b>: duplicate external hashes within the event (the parent included) make
 *       it a no-op. Otherwise every block is re-hashed from {@code token_ids} with
 *       {@link BlockHasher#localBlockHashes} using the <em>registered</em> block size, the seed
 *       {@link BlockHasher#saltSeed}(lora_name, cache_salt) and the block's MM hashes, so the local
 *       hashes equal those of a query over the same tokens; the engine hashes stay external ids.
 *       If the event's {@code block_size} differs from the registered one no block is indexed; if
 *       {@code token_ids} is short only the complete leading blocks are. The rest count as dropped
 *       blocks. Eagle windows ({@code blockSize + 1} tokens) are used when the worker is registered
 *       as eagle or the event carried bigram tokens. {@code medium} selects the tier
 *       ({@link StorageTier#fromMedium}). An unknown parent rejects the store (counted).
 *   <li><b>BlockRemoved</b>: removes the hashes on the medium's tier; unknown hashes are skipped.
 *   <li><b>AllBlocksCleared</b>: {@link BlockIndex#clearWorker} of {@code rank.workerId()}, i.e.
 *       every DP rank of the worker, all tiers.
 * </ul>
 *
 * <p><b>DP rank.</b> {@code rank} is used as given. A batch's non-null
 * {@link KvEventBatch#dpRank()} overrides the rank of the socket it arrived on; resolving that
 * (and checking it belongs to the worker) is the caller's job before calling {@link #apply}.
 *
 * <p><b>Threading.</b> Stateless; the index's owner thread must make the call (events of one rank
 * must be applied in order). Cost: O(tokens + blocks) per store, O(hashes) per removal.
 */
public final class EventApplier {

  private static final int LINEAR_DUPLICATE_SCAN = 16;

  private EventApplier() {}

  /**
   * Applies {@code batch}'s events in order.
   *
   * @param registeredBlockSize the partition's block size (positive)
   * @param eagle whether the worker is registered with eagle (overlapping) block windows
   */
  public static ApplyStats apply(
      BlockIndex index,
      WorkerRank rank,
      int registeredBlockSize,
      boolean eagle,
      KvEventBatch batch) {
    if (registeredBlockSize <= 0) {
      throw new IllegalArgumentException("registeredBlockSize must be positive");
    }
    Tally t = new Tally();
    for (KvEvent event : batch.events()) {
      if (event instanceof BlockStored s) {
        store(index, rank, registeredBlockSize, eagle, s, t);
      } else if (event instanceof BlockRemoved rm) {
        if (!local(rm.locality()) || !mainGroup(rm.kvCacheSpecKind(), rm.groupIdx())) {
          t.droppedEvents++;
          continue;
        }
        index.remove(rank, StorageTier.fromMedium(rm.medium()), rm.blockHashes());
        t.removedBlocks += rm.blockHashes().length;
      } else if (event instanceof AllBlocksCleared) {
        index.clearWorker(rank.workerId());
        t.cleared++;
      }
    }
    return new ApplyStats(
        t.storedBlocks,
        t.removedBlocks,
        t.cleared,
        t.rejectedStores,
        t.droppedEvents,
        t.droppedBlocks);
  }

  private static void store(
      BlockIndex index,
      WorkerRank rank,
      int blockSize,
      boolean registeredEagle,
      BlockStored s,
      Tally t) {
    long[] ext = s.blockHashes();
    if (!local(s.locality())
        || !mainGroup(s.kvCacheSpecKind(), s.groupIdx())
        || hasDuplicate(s.hasParent(), s.parentHash(), ext)) {
      t.droppedEvents++;
      return;
    }
    boolean eagle = registeredEagle || s.eagle();
    int blocks =
        s.blockSize() != blockSize
            ? 0
            : Math.min(ext.length, BlockHasher.blockCount(s.tokenIds().length, blockSize, eagle));
    t.droppedBlocks += ext.length - blocks;
    if (blocks == 0) {
      t.droppedEvents++;
      return;
    }
    int tokenCount = blocks * blockSize + (eagle ? 1 : 0);
    long seed = BlockHasher.saltSeed(s.loraName(), s.cacheSalt());
    long[] local =
        BlockHasher.localBlockHashes(
            s.tokenIds(), tokenCount, blockSize, seed, eagle, s.mmHashes());
    long[] external = blocks == ext.length ? ext : Arrays.copyOf(ext, blocks);
    if (index.store(
        rank, StorageTier.fromMedium(s.medium()), s.hasParent(), s.parentHash(), external, local)) {
      t.storedBlocks += blocks;
    } else {
      t.rejectedStores++;
    }
  }

  private static boolean local(String locality) {
    return locality == null || "LOCAL".equalsIgnoreCase(locality);
  }

  private static boolean mainGroup(String kind, Integer groupIdx) {
    if (kind != null) {
      return kind.equals("full_attention")
          || kind.equals("mla_attention")
          || kind.equals("sink_full_attention");
    }
    return groupIdx == null || groupIdx == 0;
  }

  private static boolean hasDuplicate(boolean hasParent, long parent, long[] hashes) {
    if (hashes.length + 1 <= LINEAR_DUPLICATE_SCAN) {
      for (int i = 0; i < hashes.length; i++) {
        if (hasParent && hashes[i] == parent) {
          return true;
        }
        for (int j = 0; j < i; j++) {
          if (hashes[j] == hashes[i]) {
            return true;
          }
        }
      }
      return false;
    }
    LongOpenHashSet seen = new LongOpenHashSet(hashes.length + 1);
    if (hasParent) {
      seen.add(parent);
    }
    for (long h : hashes) {
      if (!seen.add(h)) {
        return true;
      }
    }
    return false;
  }

  private static final class Tally {
    long storedBlocks;
    long removedBlocks;
    long cleared;
    long rejectedStores;
    long droppedEvents;
    long droppedBlocks;
  }
}
