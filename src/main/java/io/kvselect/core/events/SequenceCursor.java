package io.kvselect.core.events;

/**
 * Per-rank watermark over the publisher's batch sequence numbers (vLLM and SGLang number the
 * batches of one publisher process 0, 1, 2, ...). It decides, for every live sequence number,
 * whether the batch is applied directly, needs a replay first, marks an engine restart, or is a
 * stale duplicate.
 *
 * <p>States: <em>Initial</em> (nothing seen) and <em>Live(last)</em>. Rules for {@link #onSequence}:
 * <table>
 *   <caption>decisions</caption>
 *   <tr><th>state</th><th>seq</th><th>decision</th></tr>
 *   <tr><td>Initial</td><td>0, or no replay endpoint</td><td>{@link Kind#APPLY} (establish)</td></tr>
 *   <tr><td>Initial</td><td>&gt; 0 with replay</td><td>{@link Kind#REPLAY} {@code [0, seq)}, then apply</td></tr>
 *   <tr><td>Live(last)</td><td>last + 1</td><td>{@link Kind#APPLY}</td></tr>
 *   <tr><td>Live(last)</td><td>&gt; last + 1</td><td>{@link Kind#GAP} {@code [last + 1, seq)}, then apply</td></tr>
 *   <tr><td>Live(last)</td><td>last, or in {@code [last - staleWindow, last)} and not 0</td>
 *       <td>{@link Kind#STALE}: drop, the watermark stays</td></tr>
 *   <tr><td>Live(last)</td><td>0 &lt; last, or &lt; last - staleWindow</td>
 *       <td>{@link Kind#RESTART}: the caller drops the rank's blocks; with replay, {@code [0, seq)}
 *       is replayed from the new process first</td></tr>
 * </table>
 *
 * <p>Restart rule: a publisher numbers from 0 again after a restart, so a sequence that goes back to
 * 0, or further back than the stale window, is a new process. A PUB socket never redelivers, so a
 * small backwards step can only be a duplicate (for example a batch seen again around a replay);
 * it is dropped. Consequence: a restart whose first batch we see is within {@code staleWindow} of
 * the old watermark (and not 0) is taken for a duplicate; with the default window of 64 this needs
 * a slow joiner that missed the first batches of the new process and an old process that had
 * published fewer than 64 more. A duplicate 0 right after 0 counts as stale.
 *
 * <p>Every decision other than STALE moves the watermark to {@code seq}: the caller is expected
 * to deliver the replayed range (when there is one) and then the batch itself.
 *
 * <p>Not thread-safe: one cursor belongs to the thread that reads its rank's socket.
 * {@code onSequence} is O(1).
 */
public final class SequenceCursor {

  /** Default number of sequence numbers below the watermark that still count as duplicates. */
  public static final int DEFAULT_STALE_WINDOW = 64;

  /** What to do with a live batch. */
  public enum Kind {
    /** Contiguous (or the first batch, establishing the cursor): deliver it. */
    APPLY,
    /** First batch after subscribing with seq &gt; 0: replay the range, then deliver it. */
    REPLAY,
    /** Batches were lost: replay the range (if possible), then deliver it. */
    GAP,
    /** The publisher restarted: drop the rank's state, replay the range if any, deliver it. */
    RESTART,
    /** Already seen: drop it. */
    STALE
  }

  /**
   * A decision; {@code [replayFrom, replayTo)} is the range to recover first (empty when
   * {@code replayFrom == replayTo}).
   */
  public record Decision(Kind kind, long replayFrom, long replayTo) {

    /** Whether a replay of {@code [replayFrom, replayTo)} should precede the batch. */
    public boolean needsReplay() {
      return replayTo > replayFrom;
    }

    static Decision of(Kind kind) {
      return new Decision(kind, 0, 0);
    }
  }

  private static final long INITIAL = -1;

  private final boolean replayAvailable;
  private final int staleWindow;
  private long last = INITIAL;

  /** A cursor with the {@link #DEFAULT_STALE_WINDOW}. */
  public SequenceCursor(boolean replayAvailable) {
    this(replayAvailable, DEFAULT_STALE_WINDOW);
  }

  /**
   * @param replayAvailable whether the rank has a replay endpoint (decides Initial catch-up)
   * @param staleWindow how far below the watermark a sequence is still a duplicate (&gt;= 0)
   */
  public SequenceCursor(boolean replayAvailable, int staleWindow) {
    if (staleWindow < 0) {
      throw new IllegalArgumentException("staleWindow must be >= 0: " + staleWindow);
    }
    this.replayAvailable = replayAvailable;
    this.staleWindow = staleWindow;
  }

  /**
   * Classifies the live sequence number {@code seq} and advances the watermark (except for STALE).
   *
   * @throws IllegalArgumentException if {@code seq} is negative (a u64 above {@code Long.MAX_VALUE})
   */
  public Decision onSequence(long seq) {
    if (seq < 0) {
      throw new IllegalArgumentException("sequence out of range: " + Long.toUnsignedString(seq));
    }
    if (last == INITIAL) {
      last = seq;
      return seq > 0 && replayAvailable
          ? new Decision(Kind.REPLAY, 0, seq)
          : Decision.of(Kind.APPLY);
    }
    if (seq == last + 1) {
      last = seq;
      return Decision.of(Kind.APPLY);
    }
    if (seq > last) {
      Decision gap = new Decision(Kind.GAP, last + 1, seq);
      last = seq;
      return gap;
    }
    boolean restart = seq < last && (seq == 0 || last - seq > staleWindow);
    if (!restart) {
      return Decision.of(Kind.STALE);
    }
    last = seq;
    return seq > 0 && replayAvailable
        ? new Decision(Kind.RESTART, 0, seq)
        : Decision.of(Kind.RESTART);
  }

  /** Whether a batch has established the cursor. */
  public boolean isLive() {
    return last != INITIAL;
  }

  /** The watermark (the last accepted sequence number), or -1 in the Initial state. */
  public long last() {
    return last;
  }

  /** Back to Initial, e.g. after the caller dropped the rank's state for another reason. */
  public void reset() {
    last = INITIAL;
  }
}
