package io.kvselect.server.events;

import io.kvselect.core.events.SequenceCursor;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.RankStats.State;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZEvent;
import org.zeromq.ZMQ;

/**
 * One subscribed rank: its SUB socket (absent while a connection attempt waits for its retry),
 * sequence cursor, the live batches held while a replay runs, and its counters. Owned by one
 * {@link PollerLoop} thread; every method except {@link #stats()} and {@link #onLinkEvent} runs
 * there. Counters are volatile with that single writer so that {@code stats()} can read them from
 * any thread; they are updated before the sink is called, so a sink that has seen a batch also
 * sees it counted. The connection fields ({@code linkDown}, {@code lastError}, {@code retries})
 * are also written by the JeroMQ I/O thread that reports the socket's connection events; each is
 * a single volatile or atomic value, and the last writer wins.
 *
 * <p>Ordering: while a replay is in flight, the batch that triggered it is held and later live
 * messages are buffered undecided; when the outcome arrives the rank delivers, in order, the reset
 * (if a gap's or restart's replay fell short; not for the first batch's catch-up from 0, which
 * keeps what the index holds, as Dynamo does), the replayed batches, the held batch, and then runs the buffered
 * messages through the cursor as if they had just arrived (which can start the next replay).
 */
final class RankSession {

  private static final Logger LOG = LoggerFactory.getLogger(RankSession.class);

  final WorkerRank rank;
  final String endpoint;
  final String replayEndpoint;
  final BatchSink sink;
  private final PollerLoop owner;
  private final Clock clock;
  private final int bufferLimit;
  private final long retryInitialNanos;
  private final long retryMaxNanos;
  private final SequenceCursor cursor;
  private final ArrayDeque<Batch> buffered = new ArrayDeque<>();
  private ZMQ.Socket socket;
  private Batch held;
  private boolean replaying;

  /** Whether the replay in flight is the first batch's catch-up {@code [0, seq)} (see onReplayDone). */
  private boolean initialReplay;

  private boolean closed;
  private long retryDelayNanos;
  private long nextAttemptNanos;

  private volatile State state = State.CONNECTING;
  private volatile boolean waitingToRetry;
  private volatile boolean linkDown;
  private volatile String lastError;
  private final AtomicLong retries = new AtomicLong();
  private volatile long lastSeq = -1;
  private volatile long batches;
  private volatile long gaps;
  private volatile long replays;
  private volatile long resets;
  private volatile long droppedFrames;
  private volatile long stale;
  private volatile long lastEventAt;

  /**
   * {@link System#nanoTime()} since which the rank has had no TCP connection to its publisher (set
   * at creation, on a failed or lost connection if not set yet), 0 while connected. Written by
   * this rank's poller and by the JeroMQ I/O thread; last writer wins.
   */
  private volatile long downSinceNanos = System.nanoTime();

  RankSession(
      WorkerRank rank,
      String endpoint,
      String replayEndpoint,
      BatchSink sink,
      PollerLoop owner,
      Clock clock,
      KvEventIngestOptions options) {
    this.rank = rank;
    this.endpoint = endpoint;
    this.replayEndpoint = replayEndpoint;
    this.sink = sink;
    this.owner = owner;
    this.clock = clock;
    this.bufferLimit = options.replayBufferLimit();
    this.retryInitialNanos = options.retryInitial().toNanos();
    this.retryMaxNanos = options.retryMax().toNanos();
    this.cursor = new SequenceCursor(replayEndpoint != null, options.staleWindow());
  }

  /** The connected socket, or null while waiting to retry. */
  ZMQ.Socket socket() {
    return socket;
  }

  /** The socket connected; resets the retry backoff. */
  void attach(ZMQ.Socket connected) {
    socket = connected;
    waitingToRetry = false;
    retryDelayNanos = 0;
  }

  /**
   * A connection attempt failed before a socket existed (the host does not resolve, or connect
   * threw): remembers {@code error} and schedules the next attempt {@code retryInitial} after the
   * first failure, doubling up to {@code retryMax}.
   */
  void connectFailed(String error, long nowNanos) {
    retryDelayNanos =
        retryDelayNanos == 0 ? retryInitialNanos : Math.min(retryMaxNanos, retryDelayNanos * 2);
    nextAttemptNanos = nowNanos + retryDelayNanos;
    retries.incrementAndGet();
    lastError = error + "; retrying in " + retryDelayNanos / 1_000_000 + " ms";
    waitingToRetry = true;
    markDown();
  }

  /** {@link System#nanoTime()} at which the next connection attempt is due. */
  long nextAttemptNanos() {
    return nextAttemptNanos;
  }

  /**
   * JeroMQ I/O thread: a connection event of the socket. A refused or lost TCP connection is
   * retried by JeroMQ itself (reconnect interval 100 ms doubling to 5 s); this only records it.
   */
  void onLinkEvent(ZEvent event) {
    switch (event.getEvent()) {
      case CONNECTED -> {
        linkDown = false;
        lastError = null;
        downSinceNanos = 0;
      }
      case CONNECT_RETRIED -> {
        retries.incrementAndGet();
        linkDown = true;
        markDown();
        Object next = event.getValue();
        lastError =
            "cannot connect to "
                + endpoint
                + " (refused or unreachable); retrying"
                + (next instanceof java.time.Duration d ? " in " + d.toMillis() + " ms" : "");
      }
      case DISCONNECTED -> {
        linkDown = true;
        markDown();
        lastError = "disconnected from " + endpoint;
      }
      default -> {}
    }
  }

  private void markDown() {
    if (downSinceNanos == 0) {
      downSinceNanos = System.nanoTime();
    }
  }

  /**
   * Any thread: {@link System#nanoTime()} since which the rank has not been connected to its
   * publisher, or 0 while it is connected (or closed).
   */
  long downSinceNanos() {
    return closed ? 0 : downSinceNanos;
  }

  /**
   * One live message: {@code frames} parts, of which the second and third are given (null when
   * absent).
   */
  void onMessage(int frames, byte[] seqFrame, byte[] payload) {
    lastEventAt = clock.millis();
    if (frames != 3 || seqFrame.length != 8) {
      droppedFrames++;
      LOG.debug("rank {}: dropped a message of {} frames", rank, frames);
      return;
    }
    long seq = ByteBuffer.wrap(seqFrame).getLong();
    if (seq < 0) {
      droppedFrames++;
      return;
    }
    Batch batch = new Batch(seq, payload);
    if (replaying) {
      if (buffered.size() >= bufferLimit) {
        droppedFrames++;
      } else {
        buffered.add(batch);
      }
      return;
    }
    handle(batch);
  }

  private void handle(Batch batch) {
    SequenceCursor.Decision d = cursor.onSequence(batch.seq());
    switch (d.kind()) {
      case STALE -> stale++;
      case APPLY -> deliver(batch);
      case REPLAY -> {
        initialReplay = true;
        recover(d, batch);
      }
      case GAP -> {
        gaps++;
        recover(d, batch);
      }
      case RESTART -> {
        reset("restart");
        recover(d, batch);
      }
      default -> throw new IllegalStateException(d.kind().name());
    }
  }

  private void recover(SequenceCursor.Decision d, Batch batch) {
    if (!d.needsReplay()) {
      deliver(batch);
    } else if (replayEndpoint == null) {
      reset("lost batches [" + d.replayFrom() + ", " + d.replayTo() + "), no replay endpoint");
      deliver(batch);
    } else {
      replays++;
      replaying = true;
      held = batch;
      state = State.REPLAYING;
      owner.requestReplay(this, d.replayFrom(), d.replayTo());
    }
  }

  /** The outcome of the replay this session asked for. */
  void onReplayDone(ReplayOutcome outcome) {
    if (closed || !replaying) {
      return;
    }
    if (!outcome.complete()) {
      if (initialReplay) {
        // the catch-up of a fresh subscription: nothing this subscription delivered was lost, and
        // what the rank's index holds came from a peer's snapshot (a joiner) or nowhere; dropping
        // it would wipe a joiner's copied blocks whenever the engine's replay ring no longer
        // reaches 0. Keep it and apply the recovered tail (Dynamo: best-effort, logged)
        LOG.warn(
            "rank {}: catch-up replay incomplete ({}); keeping the rank's blocks",
            rank,
            outcome.reason());
      } else {
        reset(outcome.reason());
      }
    }
    initialReplay = false;
    for (Batch b : outcome.deliverable()) {
      deliver(b);
    }
    replaying = false;
    state = State.LIVE;
    Batch live = held;
    held = null;
    deliver(live);
    while (!replaying && !buffered.isEmpty() && !closed) {
      handle(buffered.poll());
    }
  }

  private void deliver(Batch b) {
    batches++;
    lastSeq = b.seq();
    if (!replaying) {
      state = State.LIVE;
    }
    try {
      sink.onBatch(rank, b.seq(), b.payload());
    } catch (RuntimeException e) {
      LOG.error("sink failed on batch {} of rank {}", b.seq(), rank, e);
    }
  }

  private void reset(String reason) {
    resets++;
    LOG.info("rank {}: reset ({})", rank, reason);
    try {
      sink.onReset(rank, reason);
    } catch (RuntimeException e) {
      LOG.error("sink failed on reset of rank {}", rank, e);
    }
  }

  /** Closes the socket (if any); no batch is delivered afterwards. */
  void close() {
    closed = true;
    state = State.CLOSED;
    waitingToRetry = false;
    buffered.clear();
    held = null;
    if (socket != null) {
      socket.close();
    }
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * Any thread. The state shows {@code RETRYING} while the rank waits for its next connection
   * attempt or its TCP connection is down, unless it is replaying or closed.
   */
  RankStats stats() {
    State s = state;
    if ((s == State.CONNECTING || s == State.LIVE) && (waitingToRetry || linkDown)) {
      s = State.RETRYING;
    }
    return new RankStats(
        s,
        lastSeq,
        batches,
        gaps,
        replays,
        resets,
        droppedFrames,
        stale,
        lastEventAt,
        retries.get(),
        lastError);
  }
}
