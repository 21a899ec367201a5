package io.kvselect.server.events;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Ground truth for the interop tests: the blocks a fake engine currently holds, keyed by the
 * engine's opaque hash, each with its parent hash and its tokens. It is updated with the same
 * commands the engine is sent and knows nothing of kvselect's hashing: {@link #depth} walks a
 * prompt block by block from the root, following parent links, as a prefix cache hit would.
 *
 * <p>Not thread-safe; owned by the test thread. O(held blocks) per prompt block.
 */
final class HeldBlocks {

  private record Held(Long parent, int[] tokens) {}

  private final Map<Long, Held> held = new HashMap<>();
  private final int blockSize;

  HeldBlocks(int blockSize) {
    this.blockSize = blockSize;
  }

  /** A BlockStored: {@code hashes[i]} holds {@code tokens[i*bs .. (i+1)*bs)}, chained from parent. */
  void store(Long parent, long[] hashes, int[] tokens) {
    Long prev = parent;
    for (int i = 0; i < hashes.length; i++) {
      held.put(
          hashes[i],
          new Held(prev, Arrays.copyOfRange(tokens, i * blockSize, (i + 1) * blockSize)));
      prev = hashes[i];
    }
  }

  /** A BlockRemoved; unknown hashes are ignored, as an engine never evicts what it lacks. */
  void remove(long... hashes) {
    for (long h : hashes) {
      held.remove(h);
    }
  }

  /** AllBlocksCleared, or an engine restart. */
  void clear() {
    held.clear();
  }

  /** How many leading full blocks of {@code prompt} the engine holds as one chain from the root. */
  int depth(int[] prompt) {
    Long parent = null;
    int depth = 0;
    for (int b = 0; (b + 1) * blockSize <= prompt.length; b++) {
      int[] block = Arrays.copyOfRange(prompt, b * blockSize, (b + 1) * blockSize);
      Long next = null;
      for (Map.Entry<Long, Held> e : held.entrySet()) {
        Held h = e.getValue();
        if (Objects.equals(h.parent(), parent) && Arrays.equals(h.tokens(), block)) {
          next = e.getKey();
          break;
        }
      }
      if (next == null) {
        return depth;
      }
      parent = next;
      depth++;
    }
    return depth;
  }
}
