package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import java.util.List;
import java.util.Objects;

/**
 * The result of one Dispatch.
 *
 * @param mode how the request is served
 * @param decode the decode worker
 * @param prefill the prefill worker (null for {@code DIRECT}, or when the pool has no prefill worker)
 * @param attempts the rejected probes, in order
 * @param previousPin the session's pin before this dispatch (null when it had none)
 * @param migrated whether an admission moved the session from another decode worker
 */
public record KvcOutcome(
    KvcMode mode,
    WorkerRank decode,
    WorkerRank prefill,
    List<Attempt> attempts,
    WorkerRank previousPin,
    boolean migrated) {

  /** One rejected admission probe. */
  public record Attempt(WorkerRank rank, String reason) {}

  public KvcOutcome {
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(decode, "decode");
    attempts = List.copyOf(attempts);
  }
}
