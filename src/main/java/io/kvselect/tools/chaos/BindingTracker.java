package io.kvselect.tools.chaos;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The worker each session's latest {@code select_and_reserve} answered, across every phase of a
 * run: a binding move is a change of worker between two consecutive answered turns of one session,
 * counted in the phase of the later turn. Thread-safe; one session is driven by one client thread
 * at a time, so its consecutive turns are never observed concurrently.
 */
final class BindingTracker {

  private final ConcurrentHashMap<String, Long> lastWorker = new ConcurrentHashMap<>();

  /** What {@link #observe} saw: whether the session had an earlier turn, and whether it moved. */
  enum Turn {
    FIRST,
    SAME,
    MOVED
  }

  /** Records that {@code session}'s turn was answered by {@code worker}. */
  Turn observe(String session, long worker) {
    Long before = lastWorker.put(session, worker);
    if (before == null) {
      return Turn.FIRST;
    }
    return before == worker ? Turn.SAME : Turn.MOVED;
  }

  /** The sessions with an answered turn so far. */
  java.util.Set<String> sessions() {
    return java.util.Set.copyOf(lastWorker.keySet());
  }
}
