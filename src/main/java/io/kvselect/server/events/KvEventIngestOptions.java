package io.kvselect.server.events;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of {@link KvEventIngest}. Immutable; {@code with*} methods return a copy.
 *
 * @param pollerThreads number of {@code kvselect-zmq-<i>} threads sharing the SUB sockets; shard
 *     {@code s} of the index is owned by poller {@code s mod pollerThreads}
 * @param ioThreads JeroMQ I/O threads of the ingest's context
 * @param rcvHwm receive high-water mark of each SUB socket (messages)
 * @param replayTimeout bound of one replay, from sending the request to the last reply
 * @param maxConcurrentReplays replays in flight at once; further requests wait their turn
 * @param replayBufferLimit live batches kept per rank while its replay runs; more are dropped
 *     (and recovered through the next gap)
 * @param staleWindow see {@link io.kvselect.core.events.SequenceCursor}
 * @param retryInitial first delay before a rank whose endpoint could not be connected (a host that
 *     does not resolve) tries again; doubled after every failure
 * @param retryMax cap of that delay
 * @param resolver resolves a {@code tcp://} host before the socket connects
 */
public record KvEventIngestOptions(
    int pollerThreads,
    int ioThreads,
    int rcvHwm,
    Duration replayTimeout,
    int maxConcurrentReplays,
    int replayBufferLimit,
    int staleWindow,
    Duration retryInitial,
    Duration retryMax,
    HostResolver resolver) {

  /** Dynamo's socket options (§3.1): reconnect 100 ms .. 5 s, heartbeat 5 s, timeout/TTL 15 s. */
  static final int RECONNECT_IVL_MS = 100;

  static final int RECONNECT_IVL_MAX_MS = 5_000;
  static final int HEARTBEAT_IVL_MS = 5_000;
  static final int HEARTBEAT_TIMEOUT_MS = 15_000;

  /**
   * Not in Dynamo's list: JeroMQ 0.6.0 leaves about 1-6 % of fresh outgoing connections with the
   * TCP connect done but the ZMTP handshake never started (its I/O poller can keep a cancelled
   * selection key for the new channel; zeromq/jeromq PR #1022, unreleased). Only the handshake
   * timer recovers such a connection, and its default is 30 s; 1 s bounds a stuck subscription
   * or replay connection to about 1.1 s, and is ample for a handshake inside a data center. Every
   * JeroMQ socket of the product uses it (the replica-sync PUB and SUB too: their links stayed
   * down for the 30 s default in 2 of about 6 fresh-clone CI runs on 2026-12-02).
   */
  public static final int HANDSHAKE_IVL_MS = 1_000;

  public KvEventIngestOptions {
    if (pollerThreads < 1
        || ioThreads < 1
        || rcvHwm < 0
        || maxConcurrentReplays < 1
        || replayBufferLimit < 0
        || staleWindow < 0) {
      throw new IllegalArgumentException("invalid ingest options: " + this);
    }
    if (replayTimeout.isNegative() || replayTimeout.isZero()) {
      throw new IllegalArgumentException("replayTimeout must be positive: " + replayTimeout);
    }
    if (retryInitial.isNegative()
        || retryInitial.isZero()
        || retryMax.compareTo(retryInitial) < 0) {
      throw new IllegalArgumentException(
          "need 0 < retryInitial <= retryMax: " + retryInitial + ", " + retryMax);
    }
    Objects.requireNonNull(resolver, "resolver");
  }

  /**
   * 4 pollers, 1 I/O thread, RCVHWM 100,000, 2 s replays, 64 concurrent, 100,000 buffered,
   * connect retries from 100 ms doubling to 5 s (Dynamo's reconnect interval), the system resolver.
   */
  public static KvEventIngestOptions defaults() {
    return new KvEventIngestOptions(
        4,
        1,
        100_000,
        Duration.ofSeconds(2),
        64,
        100_000,
        64,
        Duration.ofMillis(RECONNECT_IVL_MS),
        Duration.ofMillis(RECONNECT_IVL_MAX_MS),
        HostResolver.SYSTEM);
  }

  /** A copy with {@code n} poller threads. */
  public KvEventIngestOptions withPollerThreads(int n) {
    return new KvEventIngestOptions(
        n,
        ioThreads,
        rcvHwm,
        replayTimeout,
        maxConcurrentReplays,
        replayBufferLimit,
        staleWindow,
        retryInitial,
        retryMax,
        resolver);
  }

  /** A copy with another replay timeout. */
  public KvEventIngestOptions withReplayTimeout(Duration timeout) {
    return new KvEventIngestOptions(
        pollerThreads,
        ioThreads,
        rcvHwm,
        timeout,
        maxConcurrentReplays,
        replayBufferLimit,
        staleWindow,
        retryInitial,
        retryMax,
        resolver);
  }

  /** A copy with another per-rank buffer limit during replays. */
  public KvEventIngestOptions withReplayBufferLimit(int limit) {
    return new KvEventIngestOptions(
        pollerThreads,
        ioThreads,
        rcvHwm,
        replayTimeout,
        maxConcurrentReplays,
        limit,
        staleWindow,
        retryInitial,
        retryMax,
        resolver);
  }

  /** A copy whose connect retries start at {@code initial} and double up to {@code max}. */
  public KvEventIngestOptions withRetryBackoff(Duration initial, Duration max) {
    return new KvEventIngestOptions(
        pollerThreads,
        ioThreads,
        rcvHwm,
        replayTimeout,
        maxConcurrentReplays,
        replayBufferLimit,
        staleWindow,
        initial,
        max,
        resolver);
  }

  /** A copy with another host resolver. */
  public KvEventIngestOptions withResolver(HostResolver r) {
    return new KvEventIngestOptions(
        pollerThreads,
        ioThreads,
        rcvHwm,
        replayTimeout,
        maxConcurrentReplays,
        replayBufferLimit,
        staleWindow,
        retryInitial,
        retryMax,
        r);
  }
}
