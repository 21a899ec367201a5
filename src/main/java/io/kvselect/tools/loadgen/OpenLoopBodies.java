package io.kvselect.tools.loadgen;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Request bodies of {@link OpenLoopGenerator}, encoded once before any clock runs. Each is a
 * Vert.x buffer over a direct Netty buffer, so the HTTP client writes a slice of it to the socket
 * (no copy into direct memory per request, as a heap buffer would need) and the same bytes serve
 * every request that sends it. Stateless.
 */
final class OpenLoopBodies {

  private OpenLoopBodies() {}

  /**
   * {@code count} {@code /select} bodies of {@code tokens} token ids each, model and routing
   * group {@code default}. Their first half is one prefix shared by all of them (a system prompt
   * seen by every request), the rest differs per body; seeded, so two runs send the same bytes.
   */
  static List<Buffer> select(int count, int tokens, long seed) {
    if (count < 1 || tokens < 1) {
      throw new IllegalArgumentException("--bodies and --tokens must be >= 1");
    }
    long[] shared = new long[tokens / 2];
    SplittableRandom prefix = new SplittableRandom(seed);
    for (int j = 0; j < shared.length; j++) {
      shared[j] = prefix.nextInt(50_000);
    }
    List<Buffer> out = new ArrayList<>(count);
    for (int b = 0; b < count; b++) {
      SplittableRandom own = new SplittableRandom(seed * 1_000_003L + b + 1);
      StringBuilder s = new StringBuilder(tokens * 6 + 80);
      s.append("{\"model_name\":\"default\",\"routing_group\":\"default\",\"token_ids\":[");
      for (int j = 0; j < tokens; j++) {
        if (j > 0) {
          s.append(',');
        }
        s.append(j < shared.length ? shared[j] : own.nextInt(50_000));
      }
      s.append("]}");
      out.add(direct(s.toString().getBytes(StandardCharsets.UTF_8)));
    }
    return List.copyOf(out);
  }

  /** {@code bytes} in a direct, never-released buffer wrapped without a copy. */
  static Buffer direct(byte[] bytes) {
    ByteBuf buf =
        Unpooled.unreleasableBuffer(Unpooled.directBuffer(bytes.length).writeBytes(bytes));
    return BufferInternal.buffer(buf);
  }
}
