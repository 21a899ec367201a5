package io.kvselect.server.cluster;

import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * Each sender's sync stream in its own order, for {@link PeerSync}: a message numbered past the
 * next one expected waits (at most {@code holdLimit} per sender) for those before it; after
 * {@code gapTimeout}, or when too many wait, the gap is skipped, counted, and the sender asked for
 * a digest. A duplicate or an old message is counted and dropped. A sender heard for the first
 * time is asked for a digest unless its first message is one.
 *
 * <p>Owned by the sync context of its {@link PeerSync}: every method and timer runs there.
 */
final class SenderStreams {

  /** What this node knows about one sender's stream. */
  private static final class Sender {
    final String id;

    /** The next sequence number to apply; -1 before the first message. */
    long expected = -1;

    final TreeMap<Long, SyncCodec.Envelope> held = new TreeMap<>();
    long gapTimer = -1;

    /** When the membership first missed this sender (ms, monotonic), or -1 while it is a member. */
    long missingSince = -1;

    Sender(String id) {
      this.id = id;
    }
  }

  private final Vertx vertx;
  private final Duration gapTimeout;
  private final int holdLimit;
  private final PeerSyncStats stats;
  private final Consumer<SyncCodec.Envelope> apply;
  private final Consumer<String> askDigest;
  private final Map<String, Sender> senders = new HashMap<>();

  /** Applies each sender's messages in order with {@code apply}; asks a sender for a digest with {@code askDigest}. */
  SenderStreams(
      Vertx vertx,
      Duration gapTimeout,
      int holdLimit,
      PeerSyncStats stats,
      Consumer<SyncCodec.Envelope> apply,
      Consumer<String> askDigest) {
    this.vertx = vertx;
    this.gapTimeout = gapTimeout;
    this.holdLimit = holdLimit;
    this.stats = stats;
    this.apply = apply;
    this.askDigest = askDigest;
  }

  /** Applies {@code e} in its sender's order, holding it if messages before it are missing. */
  void receive(SyncCodec.Envelope e) {
    Sender p = senders.computeIfAbsent(e.from(), Sender::new);
    if (p.expected < 0) {
      p.expected = e.seq();
      if (!e.kind().equals("digest")) {
        askDigest.accept(p.id);
      }
    }
    if (e.seq() < p.expected || p.held.containsKey(e.seq())) {
      stats.duplicates.incrementAndGet();
      return;
    }
    if (e.seq() > p.expected) {
      p.held.put(e.seq(), e);
      if (p.held.size() > holdLimit) {
        skipGap(p);
      } else if (p.gapTimer < 0) {
        armGapTimer(p);
      }
      return;
    }
    apply.accept(e);
    p.expected++;
    drainHeld(p);
  }

  /**
   * Forgets the senders that are not in {@code live} and have been missing for {@code graceMs}
   * (as of {@code nowMs}, monotonic), dropping what they held; returns their ids. A sender in
   * {@code live} is no longer missing.
   */
  List<String> goneFor(Set<String> live, long nowMs, long graceMs) {
    List<String> gone = new ArrayList<>();
    Iterator<Sender> it = senders.values().iterator();
    while (it.hasNext()) {
      Sender p = it.next();
      if (live.contains(p.id)) {
        p.missingSince = -1;
        continue;
      }
      if (p.missingSince < 0) {
        p.missingSince = nowMs;
      }
      if (nowMs - p.missingSince >= graceMs) {
        it.remove();
        cancelGapTimer(p);
        gone.add(p.id);
      }
    }
    return gone;
  }

  /** Cancels every gap timer (the sync is closing). */
  void close() {
    for (Sender p : senders.values()) {
      cancelGapTimer(p);
    }
  }

  private void drainHeld(Sender p) {
    while (!p.held.isEmpty() && p.held.firstKey() == p.expected) {
      apply.accept(p.held.pollFirstEntry().getValue());
      p.expected++;
    }
    if (p.held.isEmpty()) {
      cancelGapTimer(p);
    }
  }

  /** Gives up on the missing messages before the first held one and asks for a digest. */
  private void skipGap(Sender p) {
    if (p.held.isEmpty() || !senders.containsKey(p.id)) {
      return;
    }
    if (p.held.firstKey() > p.expected) {
      stats.gaps.incrementAndGet();
      p.expected = p.held.firstKey();
      askDigest.accept(p.id);
    }
    drainHeld(p);
    if (!p.held.isEmpty() && p.gapTimer < 0) {
      armGapTimer(p);
    }
  }

  private void armGapTimer(Sender p) {
    p.gapTimer =
        vertx.setTimer(
            gapTimeout.toMillis(),
            t -> {
              p.gapTimer = -1;
              skipGap(p);
            });
  }

  private void cancelGapTimer(Sender p) {
    if (p.gapTimer >= 0) {
      vertx.cancelTimer(p.gapTimer);
      p.gapTimer = -1;
    }
  }
}
