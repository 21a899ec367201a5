package io.kvselect.server.cluster;

import java.time.Duration;

/**
 * Timing of node-to-node sync. Immutable; the {@code with*} methods return copies.
 *
 * <ul>
 *   <li>{@code reconcileInterval}: how often each node publishes the digest of the reservations it
 *       owns (5 s by default). Views of the load converge within two intervals after lost
 *       messages or a restart.
 *   <li>{@code deadGrace}: how long a peer must be absent from the cluster membership before the
 *       survivors release its bookings (one interval by default, so a death also converges within
 *       two intervals of the membership noticing it).
 *   <li>{@code gapTimeout}: how long a receiver holds messages behind a missing sequence number
 *       before it skips the gap and asks the sender for a digest (the smaller of 1 s and half an
 *       interval by default).
 *   <li>{@code requestTimeout}: the send timeout of every point-to-point request (recovery).
 *   <li>{@code chunkBlocks}: index entries per recovery chunk.
 * </ul>
 */
public record PeerSyncOptions(
    Duration reconcileInterval,
    Duration deadGrace,
    Duration gapTimeout,
    Duration requestTimeout,
    int chunkBlocks) {

  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(5);

  public PeerSyncOptions {
    requirePositive(reconcileInterval, "reconcile_interval");
    requirePositive(deadGrace, "dead_grace");
    requirePositive(gapTimeout, "gap_timeout");
    requirePositive(requestTimeout, "request_timeout");
    if (chunkBlocks <= 0) {
      throw new IllegalArgumentException("chunk_blocks must be positive: " + chunkBlocks);
    }
  }

  private static void requirePositive(Duration d, String name) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(name + " must be positive: " + d);
    }
  }

  public static PeerSyncOptions defaults() {
    return withInterval(DEFAULT_INTERVAL);
  }

  /** Defaults derived from one reconciliation interval. */
  public static PeerSyncOptions withInterval(Duration interval) {
    Duration gap = interval.dividedBy(2);
    return new PeerSyncOptions(
        interval,
        interval,
        gap.compareTo(Duration.ofSeconds(1)) < 0 ? gap : Duration.ofSeconds(1),
        Duration.ofSeconds(10),
        4096);
  }

  public PeerSyncOptions withDeadGrace(Duration d) {
    return new PeerSyncOptions(reconcileInterval, d, gapTimeout, requestTimeout, chunkBlocks);
  }

  public PeerSyncOptions withGapTimeout(Duration d) {
    return new PeerSyncOptions(reconcileInterval, deadGrace, d, requestTimeout, chunkBlocks);
  }

  public PeerSyncOptions withChunkBlocks(int n) {
    return new PeerSyncOptions(reconcileInterval, deadGrace, gapTimeout, requestTimeout, n);
  }
}
