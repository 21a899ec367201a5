package io.kvselect.core.kvc;

import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of recorded KVC dispatches: requests by mode, rejects by reason, migrations (an
 * admission that moved a session's pin), and blacklist entries (a reject that brought a
 * (session, worker) counter to {@code tau_reject}). Thread-safe: adders and a concurrent map.
 */
public final class KvcMetrics {

  private final Map<KvcMode, LongAdder> modes = new EnumMap<>(KvcMode.class);
  private final ConcurrentHashMap<String, LongAdder> rejects = new ConcurrentHashMap<>();
  private final LongAdder migrations = new LongAdder();
  private final LongAdder blacklistEntries = new LongAdder();

  public KvcMetrics() {
    for (KvcMode m : KvcMode.values()) {
      modes.put(m, new LongAdder());
    }
  }

  void served(KvcMode mode, boolean migrated) {
    modes.get(mode).increment();
    if (migrated) {
      migrations.increment();
    }
  }

  void rejected(String reason, boolean blacklisted) {
    rejects.computeIfAbsent(reason == null ? "unknown" : reason, k -> new LongAdder()).increment();
    if (blacklisted) {
      blacklistEntries.increment();
    }
  }

  public long requests(KvcMode mode) {
    return modes.get(mode).sum();
  }

  /** Rejects by reason, sorted by reason. */
  public Map<String, Long> rejects() {
    Map<String, Long> out = new TreeMap<>();
    rejects.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  public long rejectsTotal() {
    long n = 0;
    for (LongAdder a : rejects.values()) {
      n += a.sum();
    }
    return n;
  }

  public long migrations() {
    return migrations.sum();
  }

  public long blacklistEntries() {
    return blacklistEntries.sum();
  }
}
