package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import java.util.List;
import java.util.Objects;

/**
 * Algorithm 1 (Route): among decode workers not blacklisted for the session
 * ({@code rejects < tau_reject}) the lexicographic maximum of
 * {@code (overlap + alpha*sticky, sticky, -inflight, -assigned)}; earlier options win exact ties.
 * When every option is blacklisted, the degenerate choice is the option with the fewest rejects
 * (earlier wins ties). Capacity is deliberately absent: it reaches the router only through Admit.
 * Under the {@link KvcParams#countWaiting} refinement, a score tie after {@code sticky} goes to the
 * worker with less accounted KV before in-flight and assigned (a new session lands where it evicts
 * least).
 * Stateless; O(options).
 */
public final class KvcRoute {

  private KvcRoute() {}

  /**
   * One decode worker as Route sees it.
   *
   * @param rank the worker
   * @param overlapBlocks prefix blocks of the request resident on it
   * @param inflight dispatched, unfinished requests on it
   * @param assigned routing decisions sent to it so far
   * @param rejects rejects of this session by it since the session last succeeded there
   * @param pinned whether it is the session's pin
   * @param residentTokens KV the router accounts to the worker (only the refinement reads it)
   */
  public record Option(
      WorkerRank rank,
      long overlapBlocks,
      long inflight,
      long assigned,
      int rejects,
      boolean pinned,
      long residentTokens) {
    public Option {
      Objects.requireNonNull(rank, "rank");
    }

    /** An option without resident accounting. */
    public Option(
        WorkerRank rank,
        long overlapBlocks,
        long inflight,
        long assigned,
        int rejects,
        boolean pinned) {
      this(rank, overlapBlocks, inflight, assigned, rejects, pinned, 0);
    }
  }

  /** The chosen index and whether it came from the degenerate branch (every option blacklisted). */
  public record Choice(int index, boolean degenerate) {}

  /** Route over {@code options} (non-empty). */
  public static Choice route(List<Option> options, KvcParams p) {
    if (options.isEmpty()) {
      throw new IllegalArgumentException("Route needs at least one decode worker");
    }
    int best = -1;
    for (int i = 0; i < options.size(); i++) {
      Option o = options.get(i);
      if (o.rejects() >= p.tauReject()) {
        continue;
      }
      if (best < 0 || better(o, options.get(best), p)) {
        best = i;
      }
    }
    if (best >= 0) {
      return new Choice(best, false);
    }
    int least = 0;
    for (int i = 1; i < options.size(); i++) {
      if (options.get(i).rejects() < options.get(least).rejects()) {
        least = i;
      }
    }
    return new Choice(least, true);
  }

  /** Whether {@code a} scores strictly above {@code b}. */
  static boolean better(Option a, Option b, KvcParams p) {
    double sa = a.overlapBlocks() + (a.pinned() ? p.alpha() : 0.0);
    double sb = b.overlapBlocks() + (b.pinned() ? p.alpha() : 0.0);
    if (sa != sb) {
      return sa > sb;
    }
    if (a.pinned() != b.pinned()) {
      return a.pinned();
    }
    if (p.countWaiting() && a.residentTokens() != b.residentTokens()) {
      return a.residentTokens() < b.residentTokens();
    }
    if (a.inflight() != b.inflight()) {
      return a.inflight() < b.inflight();
    }
    return a.assigned() < b.assigned();
  }
}
