package io.kvselect.core.select;

import io.kvselect.core.index.WorkerRank;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code sticky}: plain session pinning, the baseline the KVC-Router is compared with. A
 * session's first request goes to the least-loaded candidate ({@link LeastLoadedPolicy}) and the
 * session stays on that rank for as long as it is a candidate; no capacity check, no migration.
 * A request without a session is placed least-loaded.
 *
 * <p>Threading: the pin table is owned by this instance's monitor; it keeps the
 * {@code maxSessions} most recently used sessions.
 */
public final class StickyPolicy implements SelectionPolicy {

  public static final String NAME = "sticky";

  private final Map<String, WorkerRank> pins;

  public StickyPolicy() {
    this(65_536);
  }

  public StickyPolicy(int maxSessions) {
    this.pins =
        new LinkedHashMap<>(64, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, WorkerRank> e) {
            return size() > maxSessions;
          }
        };
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int choose(List<Candidate> candidates, PolicyContext ctx) {
    String s = ctx.sessionId();
    if (s == null) {
      return LeastLoadedPolicy.leastLoaded(candidates);
    }
    synchronized (pins) {
      WorkerRank pin = pins.get(s);
      if (pin != null) {
        for (int i = 0; i < candidates.size(); i++) {
          if (candidates.get(i).rank().equals(pin)) {
            return i;
          }
        }
      }
      int i = LeastLoadedPolicy.leastLoaded(candidates);
      pins.put(s, candidates.get(i).rank());
      return i;
    }
  }

  /** The rank {@code sessionId} is pinned to, or null. */
  public WorkerRank pin(String sessionId) {
    synchronized (pins) {
      return pins.get(sessionId);
    }
  }
}
