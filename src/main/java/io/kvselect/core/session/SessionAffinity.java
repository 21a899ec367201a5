package io.kvselect.core.session;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

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
 * <p>Threading: implementations are safe to call from any thread and each call is atomic, since
 * callers hold different partition locks and {@link #sweep} / {@link #removeWorker} span
 * partitions. A cluster-wide implementation may back this with a distributed map.
 */
public interface SessionAffinity {

  /** Dynamo's per-partition table limit. */
  int MAX_ENTRIES = 65_536;

  /** Longest accepted session id, in UTF-8 bytes. */
  int MAX_SESSION_ID_BYTES = 256;

  /** The rank the session is bound to; empty if unbound or expired. Never creates a binding. */
  Optional<WorkerRank> lookup(String partition, String sessionId);

  /**
   * Binds the session to {@code target} (creating the binding if absent or expired, re-targeting
   * it if it points elsewhere; existing leases are kept) and adds lease {@code leaseId}.
   * Re-adding a held lease is a no-op.
   *
   * @throws SelectionException BAD_REQUEST for an invalid session id, NOT_READY when a new
   *     binding would exceed the table's capacity
   */
  void bindAndLease(String partition, String sessionId, WorkerRank target, String leaseId);

  /** Releases a lease; unknown sessions or leases are ignored. */
  void releaseLease(String partition, String sessionId, String leaseId);

  /** Removes bindings idle past their TTL; returns how many. */
  int sweep();

  /** Drops every binding that targets any rank of {@code workerId}. */
  void removeWorker(long workerId);

  /** Number of bindings held. */
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
