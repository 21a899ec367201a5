package io.kvselect.core.queue;

/**
 * One {@code router_queue_by_incoming_missing_isl} tier. A request whose missing ISL (its
 * cache-aware uncached prefill tokens, {@link QueuedRequest#uncachedPrefillTokens()}) is at least
 * {@code minMissingIslTokens} matches the tier; among matching tiers the one with the highest
 * floor wins. The winning tier caps the queue's pending ISL tokens at {@code maxQueueDepth x
 * workers}. Immutable.
 */
public record IslTier(long minMissingIslTokens, long maxQueueDepth) {

  public IslTier {
    if (minMissingIslTokens < 0) {
      throw new IllegalArgumentException(
          "minMissingIslTokens must be >= 0: " + minMissingIslTokens);
    }
    if (maxQueueDepth < 0) {
      throw new IllegalArgumentException("maxQueueDepth must be >= 0: " + maxQueueDepth);
    }
  }

  /** {@code maxQueueDepth x workers}, saturating at {@link Long#MAX_VALUE}. */
  public long cap(int workers) {
    return QueueMath.saturatingMultiply(maxQueueDepth, workers);
  }
}
