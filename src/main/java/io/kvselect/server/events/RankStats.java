package io.kvselect.server.events;

/**
 * A snapshot of one rank's ingest counters. Counters are written by the rank's poller thread (the
 * connection fields also by the JeroMQ I/O thread that reports connection events) and read
 * without locking, so fields of one snapshot may be a few events apart.
 *
 * @param state where the rank's subscription is
 * @param lastSeq the sequence number of the last delivered batch, -1 before the first one
 * @param batches batches delivered to the sink (live and replayed)
 * @param gaps forward jumps of the live sequence (lost batches)
 * @param replays replay requests sent (initial catch-up, gaps, restarts)
 * @param resets {@link BatchSink#onReset} calls
 * @param droppedFrames live messages dropped: wrong frame count, a sequence frame that is not
 *     8 bytes or above {@code Long.MAX_VALUE}, or no room in the buffer kept during a replay
 * @param stale live batches dropped as duplicates of already seen sequence numbers
 * @param lastEventAt epoch millis of the last live message received (any shape), 0 before
 * @param retries failed connection attempts: a host that did not resolve, a connect that threw,
 *     a TCP connection refused or lost
 * @param lastError the last such failure, kept until the next successful connection; null when
 *     the rank is connected or has not failed yet
 */
public record RankStats(
    State state,
    long lastSeq,
    long batches,
    long gaps,
    long replays,
    long resets,
    long droppedFrames,
    long stale,
    long lastEventAt,
    long retries,
    String lastError) {

  /** Subscription state of a rank. */
  public enum State {
    /** Subscribed, no batch delivered yet and no connection failure seen. */
    CONNECTING,
    /**
     * Not connected, trying again: the host does not resolve (yet), or the publisher refused or
     * dropped the connection. {@code lastError} says which.
     */
    RETRYING,
    /** Delivering live batches. */
    LIVE,
    /** A replay is in flight; live batches are buffered and delivered after it. */
    REPLAYING,
    /** Unsubscribed or ingest closed: the socket is closed. */
    CLOSED
  }

  /** The state's name in JSON and metrics: {@code connecting}, {@code retrying}, ... */
  public String stateName() {
    return state.name().toLowerCase(java.util.Locale.ROOT);
  }
}
