package io.kvselect.tools.sim;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The simulated time, as the selection service reads it: a {@link Clock} the event loop moves
 * forward ({@link #set}, in milliseconds from the replay's start at {@link #EPOCH}). Confined to
 * the simulator's thread, like the service calls that read it.
 */
final class SimClock extends Clock {

  /** Simulated time zero. */
  static final Instant EPOCH = Instant.parse("2026-01-01T00:00:00Z");

  private double nowMs;

  /** Moves the clock to {@code ms} (never backwards). */
  void set(double ms) {
    if (ms < nowMs) {
      throw new IllegalArgumentException("time runs forward: " + ms + " < " + nowMs);
    }
    nowMs = ms;
  }

  double nowMs() {
    return nowMs;
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("the simulated clock is UTC only");
  }

  @Override
  public long millis() {
    return EPOCH.toEpochMilli() + (long) Math.floor(nowMs);
  }

  @Override
  public Instant instant() {
    long nanos = (long) Math.floor(nowMs * 1_000_000.0);
    return EPOCH.plusNanos(nanos);
  }
}
