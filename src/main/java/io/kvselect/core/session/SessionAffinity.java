package io.kvselect.core.session;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Session-to-rank bindings, one table per partition (spec §5.5). A booking ({@code
 * /select_and_reserve}, or a replayed {@code /reservations} carrying a session) binds its session
 * to the booked rank and holds a lease for as long as the reservation lives; a plain {@code
 * /select} only looks the binding up.
 *
 * <p>Invariants: a binding with at least one lease never expires; the idle TTL clock starts when
 * its last lease is released; an expired binding reads as absent and a new booking re-creates it;
 * a binding always targets a rank the caller booked last.
 *
 * <p>This is an asynchronous seam: the local implementation completes every stage before
 * returning; a cluster-wide one (a distributed map) completes later, on its own threads, and
 * must never block the caller. Callers compose the stages and never wait on them.
 *
 * <p>Threading: implementations are safe to call from any thread and each call is atomic; callers
 * may hold a partition's lock, so an implementation never calls back into the service.
 */
public interface SessionAffinity {

  /** Dynamo's per-partition table limit. */
  int MAX_ENTRIES = 65_536;

  /** Longest accepted session id, in UTF-8 bytes. */
  int MAX_SESSION_ID_BYTES = 256;

  /**
   * The rank the session is bound to; empty if unbound or expired. Never creates a binding.
   * Completes exceptionally with BAD_REQUEST for an invalid session id.
   */
  CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId);

  /**
   * Compare-and-bind: when the session's live binding is {@code expected} (null: unbound or
   * expired) or already {@code target}, binds it to {@code target} (existing leases are kept) and
   * adds lease {@code leaseId}; re-adding a held lease is a no-op. Otherwise another booking won
   * the race: nothing changes and no lease is added. Completes with the binding in effect
   * afterwards, so the caller booked {@code target} exactly when the result equals it. This is
   * what makes a new session's first binding atomic when several callers (threads, or nodes of a
   * cluster) book it at once: exactly one target wins and every caller learns which.
   *
   * <p>Completes exceptionally with {@link SelectionException} BAD_REQUEST for an invalid session
   * id, NOT_READY when a new binding would exceed the table's capacity.
   */
  CompletionStage<WorkerRank> bindAndLease(
      String partition, String sessionId, WorkerRank expected, WorkerRank target, String leaseId);

  /** Releases a lease; unknown sessions or leases are ignored. */
  CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId);

  /** Removes bindings idle past their TTL; completes with how many. */
  CompletionStage<Integer> sweep();

  /** Drops every binding that targets any rank of {@code workerId}. */
  CompletionStage<Void> removeWorker(long workerId);

  /** Number of bindings this process knows of (a local view; for metrics and tests). */
  int size();

  /**
   * Checks that a session id is 1..{@value #MAX_SESSION_ID_BYTES} bytes of UTF-8.
   *
   * @throws SelectionException BAD_REQUEST naming {@code session_id}
   */
  static void requireValidSessionId(String sessionId) {
    if (sessionId == null || sessionId.isEmpty()) {
      throw SelectionException.badRequest("session_id must not be empty");
    }
    if (sessionId.length() * 3 > MAX_SESSION_ID_BYTES
        && sessionId.getBytes(StandardCharsets.UTF_8).length > MAX_SESSION_ID_BYTES) {
      throw SelectionException.badRequest(
          "session_id must be at most " + MAX_SESSION_ID_BYTES + " bytes of UTF-8");
    }
  }
}
