package io.kvselect.core.kvc;

import java.util.List;

/**
 * The {@code kvc} block of a selection answered under the {@code kvc} policy.
 *
 * @param mode {@code direct}, {@code seed}, {@code reseed} or {@code fallback}
 * @param prefill the prefill worker (null for direct, or when the partition has no prefill worker)
 * @param appendTokens the request's tokens not resident on its best-overlapping decode worker
 * @param attempts the rejected admission probes, in order
 */
public record KvcAnswer(String mode, Worker prefill, long appendTokens, List<Probe> attempts) {

  /** A worker as the answer names it. */
  public record Worker(long workerId, int dpRank, String endpoint) {}

  /** One rejected probe. */
  public record Probe(long workerId, int dpRank, String reason) {}

  public KvcAnswer {
    attempts = List.copyOf(attempts);
  }
}
