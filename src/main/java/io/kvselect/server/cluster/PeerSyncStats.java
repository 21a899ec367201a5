package io.kvselect.server.cluster;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** The counters of node-to-node sync ({@link PeerSync}), for {@code /cluster} and tests: atomics, written on the sync context, read anywhere. */
public final class PeerSyncStats {
  public final AtomicLong received = new AtomicLong();
  public final AtomicLong applied = new AtomicLong();
  public final AtomicLong ignored = new AtomicLong();
  public final AtomicLong duplicates = new AtomicLong();
  public final AtomicLong gaps = new AtomicLong();
  public final AtomicLong digestsSent = new AtomicLong();
  public final AtomicLong digestsApplied = new AtomicLong();
  public final AtomicLong corrections = new AtomicLong();
  public final AtomicLong digestRequests = new AtomicLong();
  public final AtomicLong malformed = new AtomicLong();
  public final AtomicLong unknownVersion = new AtomicLong();
  public final AtomicLong catalogRefused = new AtomicLong();
  public final AtomicLong peersReleased = new AtomicLong();
  public final AtomicLong bookingsReleased = new AtomicLong();
  public final AtomicLong fromDeparted = new AtomicLong();

  /** A snapshot, by snake_case name. */
  public Map<String, Long> snapshot() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("received", received.get());
    m.put("applied", applied.get());
    m.put("ignored", ignored.get());
    m.put("duplicates", duplicates.get());
    m.put("gaps", gaps.get());
    m.put("digests_sent", digestsSent.get());
    m.put("digests_applied", digestsApplied.get());
    m.put("corrections", corrections.get());
    m.put("digest_requests", digestRequests.get());
    m.put("malformed", malformed.get());
    m.put("unknown_version", unknownVersion.get());
    m.put("catalog_refused", catalogRefused.get());
    m.put("peers_released", peersReleased.get());
    m.put("bookings_released", bookingsReleased.get());
    m.put("from_departed", fromDeparted.get());
    return m;
  }
}
