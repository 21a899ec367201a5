package io.kvselect.core.queue;

/**
 * A request waiting in a {@link RouterQueue}. Immutable; compared by identity (two requests with
 * equal fields are distinct queue entries).
 */
public final class QueuedRequest {

  private final String policyClass;
  private final long islTokens;
  private final long uncachedPrefillTokens;
  private final double priorityJumpSecs;
  private final Long strictPriority;
  private final long enqueuedNanos;

  /**
   * @param policyClass the requested class ({@code x-dynamo-meta-policy-class}); {@code null} =
   *     the default class
   * @param islTokens input sequence length in tokens, {@code >= 0}; summed into {@link
   *     RouterQueue#pendingIslTokens()}
   * @param uncachedPrefillTokens the cache-aware prefill (ISL minus the best overlap) at enqueue,
   *     {@code >= 0}: the WSPT processing time and the missing ISL that picks the ISL tier
   * @param priorityJumpSecs seconds the request is moved ahead, finite and {@code >= 0}
   * @param strictPriority {@code null} = none (ranks as 0); a higher value is served first within
   *     its class, before any key of the class's policy
   * @param enqueuedNanos monotonic clock reading ({@link System#nanoTime()}) when the request was
   *     parked
   */
  public QueuedRequest(
      String policyClass,
      long islTokens,
      long uncachedPrefillTokens,
      double priorityJumpSecs,
      Long strictPriority,
      long enqueuedNanos) {
    if (islTokens < 0) {
      throw new IllegalArgumentException("islTokens must be >= 0: " + islTokens);
    }
    if (uncachedPrefillTokens < 0) {
      throw new IllegalArgumentException(
          "uncachedPrefillTokens must be >= 0: " + uncachedPrefillTokens);
    }
    if (!(priorityJumpSecs >= 0) || Double.isInfinite(priorityJumpSecs)) {
      throw new IllegalArgumentException(
          "priorityJumpSecs must be finite and >= 0: " + priorityJumpSecs);
    }
    this.policyClass = policyClass;
    this.islTokens = islTokens;
    this.uncachedPrefillTokens = uncachedPrefillTokens;
    this.priorityJumpSecs = priorityJumpSecs;
    this.strictPriority = strictPriority;
    this.enqueuedNanos = enqueuedNanos;
  }

  public String policyClass() {
    return policyClass;
  }

  public long islTokens() {
    return islTokens;
  }

  public long uncachedPrefillTokens() {
    return uncachedPrefillTokens;
  }

  public double priorityJumpSecs() {
    return priorityJumpSecs;
  }

  public Long strictPriority() {
    return strictPriority;
  }

  public long enqueuedNanos() {
    return enqueuedNanos;
  }

  /** {@link #strictPriority()} with {@code null} as 0. */
  long strictRank() {
    return strictPriority == null ? 0L : strictPriority;
  }

  /** {@code round(priorityJumpSecs x 1e9)}, saturating. */
  long priorityJumpNanos() {
    double nanos = priorityJumpSecs * 1e9;
    return nanos >= Long.MAX_VALUE ? Long.MAX_VALUE : Math.round(nanos);
  }

  /** FCFS key: {@code enqueuedNanos - round(priorityJumpSecs x 1e9)}, saturating; lower first. */
  long fcfsKey() {
    return QueueMath.saturatingSubtract(enqueuedNanos, priorityJumpNanos());
  }

  /**
   * LCFS key: {@code -enqueuedNanos - round(priorityJumpSecs x 1e9)}, saturating; lower first, so
   * the latest arrival is served first and a jump moves a request earlier.
   */
  long lcfsKey() {
    long negated = enqueuedNanos == Long.MIN_VALUE ? Long.MAX_VALUE : -enqueuedNanos;
    return QueueMath.saturatingSubtract(negated, priorityJumpNanos());
  }

  /**
   * WSPT key (Smith's rule, processing time over weight): {@code uncachedPrefillTokens / (1 +
   * priorityJumpSecs)}; lower first.
   */
  double wsptKey() {
    return uncachedPrefillTokens / (1.0 + priorityJumpSecs);
  }

  @Override
  public String toString() {
    return "QueuedRequest[class="
        + policyClass
        + ", isl="
        + islTokens
        + ", uncached="
        + uncachedPrefillTokens
        + ", jump="
        + priorityJumpSecs
        + ", strict="
        + strictPriority
        + ", enqueued="
        + enqueuedNanos
        + "]";
  }
}
