package io.kvselect.server.session;

import io.kvselect.core.index.WorkerRank;

/**
 * A call on the node's session table, as {@link BusSessionAffinity} sends it to
 * {@code kvselect.session.affinity} and {@link SessionAffinityVerticle} answers it: one record per
 * method of {@code core.session.SessionAffinity}, with that method's arguments.
 */
sealed interface SessionCommand {

  record Lookup(String partition, String sessionId) implements SessionCommand {}

  record BindAndLease(String partition, String sessionId, WorkerRank expected, WorkerRank target, String leaseId)
      implements SessionCommand {}

  record ReleaseLease(String partition, String sessionId, String leaseId) implements SessionCommand {}

  record Sweep() implements SessionCommand {}

  record RemoveWorker(long workerId) implements SessionCommand {}

  /** The answer of a call that failed: the table's own exception, handed back as it was. */
  record Failed(Throwable cause) {}
}
