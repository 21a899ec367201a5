package io.kvselect.tools.sim;

import java.util.List;

/**
 * A replayable workload: sessions, each a list of turns sent one after another. Immutable.
 *
 * @param name {@code agentic} or {@code mooncake}
 * @param blockTokens tokens per prefix block (Route's overlap unit)
 * @param sessions the sessions, in id order
 */
record Workload(String name, int blockTokens, List<Session> sessions) {

  /**
   * One request. {@code prefixTokens} is the part of the input that a previous turn of the session
   * left as KV (the prompt head); {@code appendTokens = inputTokens - prefixTokens} is new.
   * {@code blocks} are the prompt's prefix-block ids (mooncake), or null (agentic: a session's
   * blocks are its own, so only its own KV can match). An agentic turn is sent {@code thinkMs} after
   * the previous one completes; a mooncake turn not before {@code arrivalMs} (absolute).
   */
  record Turn(
      int session,
      int turn,
      long inputTokens,
      long prefixTokens,
      long outputTokens,
      double thinkMs,
      double arrivalMs,
      long[] blocks) {

    long appendTokens() {
      return inputTokens - prefixTokens;
    }
  }

  /** A session: opens at {@code startMs} (or later, when too many are open) and runs its turns in order. */
  record Session(int id, double startMs, List<Turn> turns) {}

  int requests() {
    int n = 0;
    for (Session s : sessions) {
      n += s.turns().size();
    }
    return n;
  }
}
