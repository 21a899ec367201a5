package io.kvselect.core.budget;

/**
 * Fences a cluster member that was paused (SIGSTOP, a frozen VM, a stop-the-world pause) for
 * longer than the cluster's failure timeout: the other members have removed it meanwhile and
 * released its view, so what it holds (its copies of the session table, its view of the others'
 * load) is stale until it has merged back. While fenced the node takes no new selection and
 * {@code /ready} answers 503, so a gateway sends the traffic elsewhere; lifecycle calls for its
 * own bookings still work.
 *
 * <p>A pause is seen as a gap between two {@link #tick}s (a thread ticking every 100 ms sees one
 * gap as long as the pause). The fence is lifted by whichever comes first:
 * <ul>
 *   <li>{@link #merged}: the member merged back into the cluster it was removed from;
 *   <li>the member list has stayed the same, with other members on it, for {@code settleNanos}
 *       ({@link #membership}): the others did not remove it after all;
 *   <li>{@code maxNanos} after the fence began: no merge came, so this is a split and the node
 *       serves as its side of it (both sides of a split keep serving).
 * </ul>
 *
 * <p>Plain domain logic (a clock and three rules), written here because no library models it.
 * Owner: the node's cluster wiring, which feeds it from its ticking thread and Hazelcast's
 * listener threads; every method is {@code synchronized} and short.
 */
public final class PauseFence {

  private final long thresholdNanos;
  private final long settleNanos;
  private final long maxNanos;
  private long lastTick;
  private boolean ticked;

  /** When the fence began (nanoTime), valid while {@link #fenced}. */
  private long since;

  private boolean fenced;
  private long pausedNanos;
  private int lastMembers = -1;
  private long membersSince;
  private long fences;
  private String lastLift = "";

  /**
   * @param thresholdNanos the shortest gap that fences (the cluster's failure timeout)
   * @param settleNanos how long an unchanged member list with others on it lifts the fence
   * @param maxNanos the longest fence
   */
  public PauseFence(long thresholdNanos, long settleNanos, long maxNanos) {
    if (thresholdNanos < 1 || settleNanos < 1 || maxNanos < 1) {
      throw new IllegalArgumentException("durations must be positive");
    }
    this.thresholdNanos = thresholdNanos;
    this.settleNanos = settleNanos;
    this.maxNanos = maxNanos;
  }

  /**
   * The ticking thread's beat at {@code now}; a gap of at least the threshold since the last one
   * fences, when the member list last seen had other members on it. A member that was alone (or
   * has not seen its member list yet) is not fenced: nobody could have removed it or released its
   * view meanwhile, and fencing it would stop a lone node for the fence's whole bound.
   */
  public synchronized void tick(long now) {
    if (ticked && now - lastTick >= thresholdNanos && lastMembers > 1) {
      fenced = true;
      since = now;
      pausedNanos = now - lastTick;
      fences++;
      membersSince = now;
    }
    ticked = true;
    lastTick = now;
    expire(now);
  }

  /** The member list has {@code members} members at {@code now} (this one included). */
  public synchronized void membership(int members, long now) {
    if (members != lastMembers) {
      lastMembers = members;
      membersSince = now;
    }
    expire(now);
  }

  /** The member merged back into the cluster (Hazelcast's MERGED lifecycle event). */
  public synchronized void merged(long now) {
    if (fenced) {
      lift("merged back into the cluster");
    }
  }

  /** Why new selections are refused now, or null when they are not. */
  public synchronized String reason(long now) {
    expire(now);
    if (!fenced) {
      return null;
    }
    return String.format(
        java.util.Locale.ROOT,
        "this node was paused for %.1f s, longer than the cluster's failure"
            + " timeout, and is rejoining the cluster (its view is stale until then); retry on another node",
        pausedNanos / 1e9);
  }

  /** Fences so far. */
  public synchronized long fences() {
    return fences;
  }

  /** What lifted the last fence ({@code ""} before any). */
  public synchronized String lastLift() {
    return lastLift;
  }

  private void expire(long now) {
    if (!fenced) {
      return;
    }
    // membersSince is never before the fence began (a fence sets it), so this also says the fence
    // is at least settleNanos old
    if (lastMembers > 1 && now - membersSince >= settleNanos) {
      lift("the member list stayed unchanged with " + lastMembers + " members");
    } else if (now - since >= maxNanos) {
      lift("no merge within the fence's bound: serving as one side of a split");
    }
  }

  private void lift(String why) {
    fenced = false;
    lastLift = why;
  }
}
