package io.kvselect.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A {@link Clock} that tests move by hand, so TTLs and expiries are deterministic. */
public final class MutableClock extends Clock {

  private volatile Instant now;

  public MutableClock(Instant start) {
    this.now = start;
  }

  public MutableClock() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  public void advance(Duration d) {
    now = now.plus(d);
  }

  public void advanceSeconds(double seconds) {
    advance(Duration.ofNanos((long) (seconds * 1_000_000_000L)));
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return now;
  }

  @Override
  public long millis() {
    return now.toEpochMilli();
  }
}
