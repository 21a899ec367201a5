package io.kvselect.tools.sim;

import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The prefix cache of one simulated decode engine as its KV events describe it: every block id
 * with the number of holders (session caches and running requests) that use it, as an engine's
 * prefix cache shares equal blocks. A block is stored ({@code BlockStored}, with its parent and
 * its tokens) when its first holder arrives and removed ({@code BlockRemoved}) when its last one
 * goes. A holder always holds a whole chain from the root, so the blocks a holder adds are a
 * suffix of its chain and so are those it frees.
 *
 * <p>Confined to the simulator's thread.
 */
final class EngineBlocks {

  private final int blockTokens;
  private final Long2IntOpenHashMap holders = new Long2IntOpenHashMap();

  EngineBlocks(int blockTokens) {
    this.blockTokens = blockTokens;
  }

  /** A holder of the chain {@code ids} (the full blocks of {@code content}) arrives; the events it causes. */
  List<KvEvent> hold(long[] ids, int[] content) {
    int first = ids.length;
    for (int i = 0; i < ids.length; i++) {
      if (holders.addTo(ids[i], 1) == 0 && first == ids.length) {
        first = i;
      }
    }
    if (first == ids.length) {
      return List.of();
    }
    int[] tokens = Arrays.copyOfRange(content, first * blockTokens, ids.length * blockTokens);
    return List.of(
        new BlockStored(
            Arrays.copyOfRange(ids, first, ids.length),
            first > 0,
            first > 0 ? ids[first - 1] : 0,
            tokens,
            blockTokens,
            null,
            null,
            null,
            null,
            null,
            null,
            null));
  }

  /** A holder of the chain {@code ids} goes; the events it causes. */
  List<KvEvent> release(long[] ids) {
    List<Long> gone = new ArrayList<>();
    for (long id : ids) {
      int before = holders.addTo(id, -1);
      if (before <= 1) {
        holders.remove(id);
        gone.add(id);
      }
    }
    if (gone.isEmpty()) {
      return List.of();
    }
    long[] hashes = new long[gone.size()];
    for (int i = 0; i < hashes.length; i++) {
      hashes[i] = gone.get(i);
    }
    return List.of(new BlockRemoved(hashes, null, null, null));
  }

  /** Blocks held. */
  int size() {
    return holders.size();
  }
}
