package io.kvselect.tools.loadgen;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The pre-encoded {@code /select_and_reserve} bodies of {@link QueueLoad}: {@code pool} prompts of
 * {@code isl} tokens, each starting with one of {@code groups} shared prefixes (the first
 * {@code sharedFraction x isl} tokens, rounded down to whole blocks) followed by its own random
 * tokens. Request {@code i} sends body {@code i % pool}; the bodies carry no {@code selection_id},
 * so the node names each reservation. Immutable after {@link #encode}; the buffers are only read,
 * by every sender event loop.
 */
final class QueueLoadWorkload {

  private final Buffer[] bodies;
  private final int prefixTokens;

  private QueueLoadWorkload(Buffer[] bodies, int prefixTokens) {
    this.bodies = bodies;
    this.prefixTokens = prefixTokens;
  }

  /** Encodes every body; the same seed gives the same bytes. */
  static QueueLoadWorkload encode(
      long seed, int pool, int isl, double sharedFraction, int groups, int blockSize) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int prefix = (int) Math.floor(isl * sharedFraction) / blockSize * blockSize;
    int[][] prefixes = new int[groups][prefix];
    for (int[] p : prefixes) {
      for (int t = 0; t < prefix; t++) {
        p[t] = 1 + rnd.nextInt(50_000);
      }
    }
    Buffer[] out = new Buffer[pool];
    StringBuilder sb = new StringBuilder(isl * 7 + 32);
    for (int b = 0; b < pool; b++) {
      sb.setLength(0);
      sb.append("{\"token_ids\":[");
      int[] p = prefixes[b % groups];
      for (int t = 0; t < isl; t++) {
        if (t > 0) {
          sb.append(',');
        }
        sb.append(t < prefix ? p[t] : 1 + rnd.nextInt(50_000));
      }
      sb.append("]}");
      out[b] = Buffer.buffer(sb.toString().getBytes(StandardCharsets.US_ASCII));
    }
    return new QueueLoadWorkload(out, prefix);
  }

  Buffer body(long request) {
    return bodies[(int) (request % bodies.length)];
  }

  int poolSize() {
    return bodies.length;
  }

  /** Tokens of the shared prefix of every prompt. */
  int prefixTokens() {
    return prefixTokens;
  }

  /** Mean encoded body size in bytes. */
  long meanBodyBytes() {
    long sum = 0;
    for (Buffer b : bodies) {
      sum += b.length();
    }
    return sum / bodies.length;
  }
}
