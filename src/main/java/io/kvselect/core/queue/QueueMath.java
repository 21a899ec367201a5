package io.kvselect.core.queue;

/** Saturating arithmetic shared by the queue types. Stateless. */
final class QueueMath {

  private QueueMath() {}

  /** {@code a x b} for {@code a, b >= 0}, saturating at {@link Long#MAX_VALUE}. */
  static long saturatingMultiply(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    return hi != 0 || lo < 0 ? Long.MAX_VALUE : lo;
  }

  /** {@code a - b}, saturating at {@link Long#MIN_VALUE} and {@link Long#MAX_VALUE}. */
  static long saturatingSubtract(long a, long b) {
    long r = a - b;
    if (((a ^ b) & (a ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }

  /** {@code a + b} for {@code a, b >= 0}, saturating at {@link Long#MAX_VALUE}. */
  static long saturatingAdd(long a, long b) {
    long r = a + b;
    return r < 0 ? Long.MAX_VALUE : r;
  }
}
