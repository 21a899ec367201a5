package io.kvselect.core.load;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The live requests of one {@link ActiveLoad}, by id and in admission order: lookups, and the
 * scans that remove requests by age ({@link #expire}) or by rank or origin ({@link #removeIf}), or
 * list them by origin ({@link #views}, {@link #origins}). What a request weighs on its rank
 * (blocks, prefill tokens) is not kept here: a removal hands each request to a {@code release}
 * callback, so that its {@link ActiveLoad} takes it off the rank's {@link RankBlocks}.
 *
 * <p>Owner: its {@link ActiveLoad}, hence its partition. Not thread-safe: every call is made under
 * that partition's lock.
 */
final class ActiveRequests {

  /** Admission order, so expiry scans only from the oldest side. */
  private final LinkedHashMap<String, ActiveRequest> byId = new LinkedHashMap<>();

  boolean contains(String requestId) {
    return byId.containsKey(requestId);
  }

  /** The active request {@code requestId}, or null. */
  ActiveRequest get(String requestId) {
    return byId.get(requestId);
  }

  /** Appends {@code r} as the newest request; its id must not be active. */
  void add(ActiveRequest r) {
    byId.put(r.id, r);
  }

  /** Removes and returns the request {@code requestId}, or null if it is not active. */
  ActiveRequest remove(String requestId) {
    return byId.remove(requestId);
  }

  int size() {
    return byId.size();
  }

  /**
   * Removes, oldest first, every request admitted at least {@code expiryMillis} before {@code
   * nowMillis}, handing each to {@code release}; stops at the first request still live.
   *
   * @return ids of the removed requests, oldest first
   */
  List<String> expire(long nowMillis, long expiryMillis, Consumer<ActiveRequest> release) {
    List<String> expired = new ArrayList<>(0);
    Iterator<ActiveRequest> it = byId.values().iterator();
    while (it.hasNext()) {
      ActiveRequest r = it.next();
      if (nowMillis - r.admittedAtMillis < expiryMillis) {
        break;
      }
      it.remove();
      release.accept(r);
      expired.add(r.id);
    }
    return expired;
  }

  /**
   * Removes every request that {@code match}es, in admission order, handing each to {@code
   * release}. O(all requests).
   *
   * @return ids of the removed requests in admission order
   */
  List<String> removeIf(Predicate<ActiveRequest> match, Consumer<ActiveRequest> release) {
    List<String> removed = new ArrayList<>();
    Iterator<ActiveRequest> it = byId.values().iterator();
    while (it.hasNext()) {
      ActiveRequest r = it.next();
      if (match.test(r)) {
        it.remove();
        release.accept(r);
        removed.add(r.id);
      }
    }
    return removed;
  }

  /**
   * The requests booked by {@code origin} (null: this node), in admission order; the hashes are
   * shared with the request. O(all requests).
   */
  List<ActiveLoad.RequestView> views(String origin) {
    List<ActiveLoad.RequestView> out = new ArrayList<>();
    for (ActiveRequest r : byId.values()) {
      if (Objects.equals(r.origin, origin)) {
        out.add(
            new ActiveLoad.RequestView(
                r.id,
                r.rank,
                r.promptHashes,
                r.islTokens,
                r.expectedOutputTokens,
                r.prefillTokens,
                r.origin));
      }
    }
    return out;
  }

  /** The distinct origins of the requests (null stands for this node). O(all requests). */
  Set<String> origins() {
    Set<String> out = new HashSet<>();
    for (ActiveRequest r : byId.values()) {
      out.add(r.origin);
    }
    return out;
  }
}
