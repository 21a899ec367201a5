package io.kvselect.core.service;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Frees ({@code DELETE /reservations/{id}}) that could not reach the node holding the booking,
 * kept to be delivered to it later: hinted handoff for the one lifecycle step whose loss leaks a
 * booking. A node that is paused past the failure timeout, or cut off, is removed from the
 * membership and later merges back with the same node id and its bookings; the frees its clients
 * sent meanwhile to the other nodes could not be applied, and without a hint those bookings would
 * stay counted on every node forever.
 *
 * <p>Two kinds of hint, each kept for {@code ttlNanos}:
 * <ul>
 *   <li>for an origin: the free of a booking whose holder is known (it left the membership, or did
 *       not answer in time); delivered when that node is a member again and answers;
 *   <li>for any returning node: the free of an id no reachable node held while some node was
 *       missing; copied to every node that comes back ({@link #returned}).
 * </ul>
 * A delivered hint is gone whatever the holder answers (freed, or not held there); one that got
 * no answer is tried again. At most {@code limit} hints are kept; beyond that a new one is
 * refused and counted.
 *
 * <p>Plain domain logic, written here because no library models it. Owner: the lifecycle
 * forwarder of one node, which records hints from forward completions and delivers them from its
 * timer; every method is {@code synchronized} and short, so those threads may call it at once.
 */
public final class DeferredFrees {

  private final int limit;
  private final long ttlNanos;

  /** origin -> id -> expiry (nanoTime), oldest first. */
  private final Map<String, LinkedHashMap<String, Long>> byOrigin = new LinkedHashMap<>();

  /** id -> expiry, for whichever node comes back. */
  private final LinkedHashMap<String, Long> forAny = new LinkedHashMap<>();

  private int size;
  private long recorded;
  private long delivered;
  private long notHeld;
  private long expired;
  private long refused;

  public DeferredFrees(int limit, long ttlNanos) {
    if (limit < 1 || ttlNanos < 1) {
      throw new IllegalArgumentException("limit and ttl must be positive");
    }
    this.limit = limit;
    this.ttlNanos = ttlNanos;
  }

  /** Keeps the free of {@code id} for {@code origin}; false when full (counted). */
  public synchronized boolean forOrigin(String origin, String id, long now) {
    LinkedHashMap<String, Long> ids = byOrigin.computeIfAbsent(origin, k -> new LinkedHashMap<>());
    if (ids.containsKey(id)) {
      ids.put(id, now + ttlNanos);
      return true;
    }
    if (size >= limit) {
      refused++;
      if (ids.isEmpty()) {
        byOrigin.remove(origin);
      }
      return false;
    }
    ids.put(id, now + ttlNanos);
    size++;
    recorded++;
    return true;
  }

  /** Keeps the free of {@code id} for every node that comes back; false when full (counted). */
  public synchronized boolean forAnyReturning(String id, long now) {
    if (forAny.containsKey(id)) {
      forAny.put(id, now + ttlNanos);
      return true;
    }
    if (size >= limit) {
      refused++;
      return false;
    }
    forAny.put(id, now + ttlNanos);
    size++;
    recorded++;
    return true;
  }

  /** {@code node} is a member again: every hint for any returning node is now also one for it. */
  public synchronized void returned(String node, long now) {
    expire(now);
    for (Map.Entry<String, Long> e : forAny.entrySet()) {
      if (size >= limit) {
        refused++;
        continue;
      }
      LinkedHashMap<String, Long> ids = byOrigin.computeIfAbsent(node, k -> new LinkedHashMap<>());
      if (ids.putIfAbsent(e.getKey(), e.getValue()) == null) {
        size++;
      }
    }
  }

  /** The origins that have hints, sorted. */
  public synchronized Set<String> origins(long now) {
    expire(now);
    return new TreeSet<>(byOrigin.keySet());
  }

  /** Up to {@code max} of {@code origin}'s hints, oldest first; they stay until {@link #delivered}. */
  public synchronized List<String> due(String origin, int max, long now) {
    expire(now);
    LinkedHashMap<String, Long> ids = byOrigin.get(origin);
    List<String> out = new ArrayList<>();
    if (ids != null) {
      for (String id : ids.keySet()) {
        if (out.size() >= max) {
          break;
        }
        out.add(id);
      }
    }
    return out;
  }

  /** {@code origin} answered the free of {@code id}: {@code freed}, or it did not hold it. */
  public synchronized void delivered(String origin, String id, boolean freed) {
    LinkedHashMap<String, Long> ids = byOrigin.get(origin);
    if (ids != null && ids.remove(id) != null) {
      size--;
      if (freed) {
        delivered++;
      } else {
        notHeld++;
      }
      if (ids.isEmpty()) {
        byOrigin.remove(origin);
      }
    }
  }

  /** Hints kept now. */
  public synchronized int size() {
    return size;
  }

  /**
   * The counters, by snake_case name: pending (frees kept for a known node, not yet delivered),
   * for_returning (frees kept for any node that comes back; they stay for their TTL, since another
   * node may still return), recorded, delivered, not_held, expired, refused.
   */
  public synchronized Map<String, Long> snapshot(long now) {
    expire(now);
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("pending", (long) (size - forAny.size()));
    m.put("for_returning", (long) forAny.size());
    m.put("recorded", recorded);
    m.put("delivered", delivered);
    m.put("not_held", notHeld);
    m.put("expired", expired);
    m.put("refused", refused);
    return m;
  }

  private void expire(long now) {
    Iterator<Map.Entry<String, LinkedHashMap<String, Long>>> origins =
        byOrigin.entrySet().iterator();
    while (origins.hasNext()) {
      LinkedHashMap<String, Long> ids = origins.next().getValue();
      expired += dropExpired(ids, now);
      if (ids.isEmpty()) {
        origins.remove();
      }
    }
    expired += dropExpired(forAny, now);
  }

  /** Drops the expired hints at the head (insertion order is expiry order, a refresh aside). */
  private int dropExpired(LinkedHashMap<String, Long> ids, long now) {
    int n = 0;
    Iterator<Long> it = ids.values().iterator();
    while (it.hasNext()) {
      if (now - it.next() >= 0) {
        it.remove();
        n++;
      }
    }
    size -= n;
    return n;
  }
}
