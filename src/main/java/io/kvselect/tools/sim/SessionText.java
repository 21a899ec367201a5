package io.kvselect.tools.sim;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The token content of every request of a workload, so that the router hashes real prompts and
 * the simulated engines publish real KV events. An agentic turn's prompt is its session's previous
 * content (prompt plus output) up to {@link Workload.Turn#prefixTokens}, then fresh tokens; a
 * Mooncake turn's prompt is its {@code hash_ids} blocks, each block id standing for the same
 * {@code blockTokens} tokens wherever it appears (so conversations that share a block share its
 * tokens), then fresh tokens past the listed blocks. Output tokens are fresh. Fresh tokens are
 * drawn from the seed, the session and the turn, so a replay is deterministic.
 *
 * <p>It also names the engine's cached blocks ({@link #blockIds}): block {@code i} of a content is
 * a hash of block {@code i-1}'s id and block {@code i}'s tokens, as engines chain their block
 * hashes, so equal prefixes get equal ids on every engine.
 *
 * <p>Confined to the simulator's thread. Keeps each session's latest content (the next turn's
 * prompt head and the ids already computed for it).
 */
final class SessionText {

  private final int blockTokens;
  private final long seed;
  private final int[][] last;
  private final long[][] lastIds;

  SessionText(int sessions, int blockTokens, long seed) {
    this.blockTokens = blockTokens;
    this.seed = seed;
    this.last = new int[sessions][];
    this.lastIds = new long[sessions][];
  }

  /** The prompt of {@code t}; an agentic turn after the first needs its predecessor's {@link #content}. */
  int[] prompt(Workload.Turn t) {
    int n = Math.toIntExact(t.inputTokens());
    int[] p = new int[n];
    int from;
    if (t.blocks() == null) {
      int head = Math.toIntExact(t.prefixTokens());
      if (head > 0) {
        int[] prev = last[t.session()];
        if (prev == null || prev.length < head) {
          throw new IllegalStateException(
              "turn "
                  + t.turn()
                  + " of session "
                  + t.session()
                  + " needs a "
                  + head
                  + "-token head its predecessor did not leave");
        }
        System.arraycopy(prev, 0, p, 0, head);
      }
      from = head;
    } else {
      long[] ids = t.blocks();
      from = (int) Math.min(n, (long) ids.length * blockTokens);
      for (int i = 0; i < from; i++) {
        p[i] = blockToken(ids[i / blockTokens], i % blockTokens);
      }
    }
    fill(p, from, t, 0);
    return p;
  }

  /** The KV {@code t} leaves on its decode engine: its prompt, then its output tokens. */
  int[] content(Workload.Turn t, int[] prompt) {
    int[] c = Arrays.copyOf(prompt, Math.toIntExact(prompt.length + t.outputTokens()));
    fill(c, prompt.length, t, 1);
    return c;
  }

  /**
   * The engine's ids of the full blocks of {@code content}, the latest content of
   * {@code session} (remembered as the next turn's prompt head); the blocks shared with the
   * session's previous content keep their ids without rehashing.
   */
  long[] blockIds(int session, int[] content) {
    int blocks = content.length / blockTokens;
    long[] ids = new long[blocks];
    int same = 0;
    int[] prev = last[session];
    if (prev != null) {
      int m = Arrays.mismatch(content, 0, blocks * blockTokens, prev, 0, prev.length);
      int common = m < 0 ? blocks * blockTokens : m;
      same = Math.min(Math.min(common / blockTokens, lastIds[session].length), blocks);
      System.arraycopy(lastIds[session], 0, ids, 0, same);
    }
    for (int i = same; i < blocks; i++) {
      long h = i == 0 ? 0x9E3779B97F4A7C15L : ids[i - 1];
      for (int k = i * blockTokens, end = k + blockTokens; k < end; k++) {
        h = (h ^ content[k]) * 0x100000001B3L;
      }
      ids[i] = mix(h);
    }
    last[session] = content;
    lastIds[session] = ids;
    return ids;
  }

  private void fill(int[] a, int from, Workload.Turn t, int kind) {
    if (from >= a.length) {
      return;
    }
    SplittableRandom r =
        new SplittableRandom(
            mix(seed * 0x2545F4914F6CDD1DL + t.session() * 131L + t.turn() * 7L + kind));
    for (int i = from; i < a.length; i++) {
      a[i] = 1 + r.nextInt(1 << 30);
    }
  }

  private static int blockToken(long blockId, int k) {
    return 1 + (int) ((mix(blockId * 1024 + k) >>> 34));
  }

  /** A 64-bit finalizer (splitmix64's). */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
