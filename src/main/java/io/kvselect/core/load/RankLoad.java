package io.kvselect.core.load;

/**
 * The load of one rank as the cost function reads it (spec §4.2).
 *
 * @param activeDecodeBlocks unique active KV blocks on the rank, fractional decay weights summed
 *     and then rounded half-up to a whole block (see {@link ActiveLoad#addOutputBlock})
 * @param activePrefillTokens prefill tokens of admitted requests whose prefill has not completed
 * @param activeRequests requests admitted and not yet freed
 */
public record RankLoad(long activeDecodeBlocks, long activePrefillTokens, int activeRequests) {

  /** The load of a rank with nothing active. */
  public static final RankLoad ZERO = new RankLoad(0, 0, 0);
}
