package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import java.util.concurrent.CompletionStage;

/**
 * The KVC-Router's mutable state, per partition: per session its pin and its reject counters,
 * per decode worker its in-flight and assigned counts, and the round-robin cursors of Fallback.
 *
 * <p>This is an asynchronous seam, like {@code core/session/SessionAffinity}: the local
 * implementation ({@link LocalKvcState}) completes every stage before returning; a cluster-wide
 * one (the cluster's session table, so every node routes a session the same way) completes later
 * on its own threads and must never block the caller. Each call is atomic on its own; the
 * dispatcher composes them and never waits.
 *
 * <p>Threading: implementations are safe from any thread and never call back into the service.
 */
public interface KvcState {

  /** The session's pin and rejects and the partition's worker counters, as one copy. */
  CompletionStage<KvcSnapshot> snapshot(String partition, String sessionId);

  /** Algorithm 3, line 21: {@code rejects[s, d]++}. */
  CompletionStage<Void> rejected(String partition, String sessionId, WorkerRank d);

  /**
   * Algorithm 3, lines 8-10: reset-on-success per {@code scope}, {@code pin[s] = d},
   * {@code inflight[d]++}, {@code assigned[d]++}, one more turn for the session. Completes with the pin before the call (null
   * when the session had none), so the caller sees a migration.
   */
  CompletionStage<WorkerRank> admitted(
      String partition, String sessionId, WorkerRank d, ResetScope scope);

  /**
   * A Fallback of the session sent to {@code d}: {@code inflight[d]++}, {@code assigned[d]++}, one
   * more turn for the session; the pin is unchanged.
   */
  CompletionStage<Void> fallback(String partition, String sessionId, WorkerRank d);

  /** A dispatched request on {@code d} finished: {@code inflight[d]--} (never below 0). */
  CompletionStage<Void> finished(String partition, WorkerRank d);

  /** The next value (0, 1, 2, ...) of the partition's round-robin cursor {@code pool}. */
  CompletionStage<Long> nextRoundRobin(String partition, String pool);

  /**
   * The value {@link #nextRoundRobin} would return next for {@code pool}, without moving the
   * cursor (a query's Fallback or seed prefill, which must change nothing).
   */
  CompletionStage<Long> peekRoundRobin(String partition, String pool);

  /** Forgets every counter and pin that names any rank of {@code workerId}. */
  CompletionStage<Void> removeWorker(long workerId);

  /** Number of sessions this process holds state for (a local view; metrics and tests). */
  int sessions();
}
