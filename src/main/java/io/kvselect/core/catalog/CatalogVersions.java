package io.kvselect.core.catalog;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The versions of a node's catalog entries, the removals it remembers, and the clock that stamps
 * its own changes: what lets nodes that change the same catalog converge (see {@link
 * CatalogVersion}) and compare catalogs cheaply ({@link #digest}).
 *
 * <p>A removal is remembered (a tombstone) for {@code tombstoneTtlMs} so that a late or repeated
 * upsert older than it does not bring the worker back; at most {@code tombstoneLimit} are kept,
 * oldest dropped first. A change older than a forgotten removal can resurrect the worker: the
 * TTL (10 min in the service) bounds how late a change may arrive.
 *
 * <p>Ownership: the catalog writer. Not thread-safe; every call is made under the catalog lock.
 */
public final class CatalogVersions {

  private final long tombstoneTtlMs;
  private final int tombstoneLimit;
  private final Map<Long, CatalogVersion> live = new HashMap<>();

  /** Removed worker id to (version, when it was recorded), in recording order. */
  private final LinkedHashMap<Long, Tombstone> removed = new LinkedHashMap<>();

  private long lastStamp;

  private record Tombstone(CatalogVersion version, long recordedMs) {}

  public CatalogVersions(long tombstoneTtlMs, int tombstoneLimit) {
    this.tombstoneTtlMs = tombstoneTtlMs;
    this.tombstoneLimit = tombstoneLimit;
  }

  /** A stamp for a change made here now: the wall clock, raised past every stamp seen. */
  public long nextStamp(long nowMs) {
    lastStamp = Math.max(nowMs, lastStamp + 1);
    return lastStamp;
  }

  /** The version this node holds for {@code workerId}: live, removed, or null when it knows none. */
  public CatalogVersion current(long workerId) {
    CatalogVersion v = live.get(workerId);
    if (v != null) {
      return v;
    }
    Tombstone t = removed.get(workerId);
    return t == null ? null : t.version();
  }

  /** Whether a change of {@code workerId} at {@code v} is newer than what this node holds. */
  public boolean accepts(long workerId, CatalogVersion v) {
    CatalogVersion cur = current(workerId);
    return cur == null || v.newerThan(cur);
  }

  /** Records that {@code workerId} is registered at {@code v}. */
  public void upserted(long workerId, CatalogVersion v, long nowMs) {
    observe(v);
    removed.remove(workerId);
    live.put(workerId, v);
    expire(nowMs);
  }

  /** Records that {@code workerId} was removed at {@code v}. */
  public void removed(long workerId, CatalogVersion v, long nowMs) {
    observe(v);
    live.remove(workerId);
    removed.remove(workerId);
    removed.put(workerId, new Tombstone(v, nowMs));
    expire(nowMs);
  }

  private void observe(CatalogVersion v) {
    lastStamp = Math.max(lastStamp, v.stamp());
  }

  private void expire(long nowMs) {
    Iterator<Tombstone> it = removed.values().iterator();
    while (it.hasNext()) {
      Tombstone t = it.next();
      if (removed.size() <= tombstoneLimit && nowMs - t.recordedMs() < tombstoneTtlMs) {
        break;
      }
      it.remove();
    }
  }

  /** The removals remembered at {@code nowMs}, as (worker id, version) pairs. */
  public List<Map.Entry<Long, CatalogVersion>> tombstones(long nowMs) {
    expire(nowMs);
    List<Map.Entry<Long, CatalogVersion>> out = new ArrayList<>(removed.size());
    removed.forEach((id, t) -> out.add(Map.entry(id, t.version())));
    return out;
  }

  /**
   * A hash of the live entries' (worker id, version) pairs, independent of their order: two
   * nodes that hold the same workers at the same versions have the same digest. Removals are
   * not in it (they expire at different moments on different nodes); a node that missed one
   * still holds the worker, so its digest differs.
   */
  public long digest() {
    long h = live.size();
    for (Map.Entry<Long, CatalogVersion> e : live.entrySet()) {
      h += mix(mix(e.getKey()) ^ e.getValue().stamp() * 31 ^ e.getValue().tie());
    }
    return h;
  }

  /** SplitMix64's finalizer: spreads the bits of {@code z}. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
