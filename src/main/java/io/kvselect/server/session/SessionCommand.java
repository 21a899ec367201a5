package io.kvselect.server.session;

/**
 * A housekeeping call on the node's session table, as {@link BusSessionAffinity} sends it to
 * {@code kvselect.session.affinity} and {@link SessionAffinityVerticle} answers it: one record per
 * method of {@code core.session.SessionAffinity} that the request path does not call, with that
 * method's arguments.
 */
sealed interface SessionCommand {

  record Sweep() implements SessionCommand {}

  record RemoveWorker(long workerId) implements SessionCommand {}

  /** The answer of a call that failed: the table's own exception, handed back as it was. */
  record Failed(Throwable cause) {}
}
