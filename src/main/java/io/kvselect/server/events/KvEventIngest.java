package io.kvselect.server.events;

import io.kvselect.core.catalog.EndpointSyntax;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.index.WorkerRank;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZMQ;

/**
 * Subscribes to the KV-event publishers of engine ranks (vLLM / SGLang ZMQ PUB sockets) and hands
 * their batches, in sequence order and still msgpack-encoded, to a {@link BatchSink}.
 *
 * <p>Threads: a fixed set of {@link KvEventIngestOptions#pollerThreads()} threads named
 * {@code kvselect-zmq-<i>}, each multiplexing the SUB sockets of many ranks with one JeroMQ poller,
 * plus one {@code kvselect-zmq-replay} thread for replay requests, plus the JeroMQ context's I/O
 * threads. The thread count does not grow with the number of ranks.
 *
 * <p>Ownership: a subscription names the index shard its batches are written to, and shard
 * {@code s} is owned by poller {@code s mod pollerThreads} ({@link #pollerOf}): every socket,
 * batch, reset, {@code afterClose} action and {@link #execute} task of that shard runs on that one
 * thread, in the order the commands were posted. So a shard has exactly one writing thread, and a
 * caller that posts "close rank r, then remove r's blocks, then open r again" gets that order.
 * Every socket is created, used and closed on its own thread; the public methods only post
 * commands and never block on I/O.
 *
 * <p>Per rank, live messages {@code [topic][seq 8 B BE][payload]} go through a
 * {@link io.kvselect.core.events.SequenceCursor}: a first batch with seq &gt; 0 or a forward gap
 * is recovered from the rank's replay endpoint (DEALER; live batches are held meanwhile and
 * delivered after the replayed ones); a replay that cannot cover the range, a gap without a
 * replay endpoint and a backwards jump (publisher restart) produce {@link BatchSink#onReset}
 * before the next batch. Malformed messages are counted and dropped. The sink's threading
 * contract is described on {@link BatchSink}. A host that does not resolve, or a publisher that
 * refuses the connection, is not an error: the rank shows {@link RankStats.State#RETRYING} with
 * the last error and keeps trying (see {@link PollerLoop}).
 *
 * <p>All public methods are thread-safe and may be called from a Vert.x event loop, except
 * {@link #close()}, which joins the threads (call it from a worker, see
 * {@link KvEventIngestVerticle}).
 */
public final class KvEventIngest implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KvEventIngest.class);
  private static final long STOP_WAIT_MS = 5_000;

  private final ZMQ.Context context;
  private final PollerLoop[] loops;
  private final ReplayLoop replays;
  private final BatchSink sink;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Starts the threads, with the system clock for {@code last_event_at}. */
  public KvEventIngest(KvEventIngestOptions options, BatchSink sink) {
    this(options, sink, Clock.systemUTC());
  }

  /** Starts the threads. */
  public KvEventIngest(KvEventIngestOptions options, BatchSink sink, Clock clock) {
    this(options, sink, clock, poller -> {});
  }

  /**
   * Starts the threads; each poller calls {@code afterRound} with its number on its own thread at
   * the end of every poll round (after the round's batches were delivered to their sinks).
   */
  public KvEventIngest(
      KvEventIngestOptions options,
      BatchSink sink,
      Clock clock,
      java.util.function.IntConsumer afterRound) {
    Objects.requireNonNull(afterRound, "afterRound");
    this.sink = Objects.requireNonNull(sink, "sink");
    this.context = ZMQ.context(options.ioThreads());
    this.replays = new ReplayLoop(context, options);
    this.loops =
        IntStream.range(0, options.pollerThreads())
            .mapToObj(i -> new PollerLoop(i, context, options, replays, clock, afterRound))
            .toArray(PollerLoop[]::new);
    replays.start();
    for (PollerLoop loop : loops) {
      loop.start();
    }
    LOG.info("KV-event ingest started: {}", options);
  }

  /**
   * Subscribes {@code rank} with the sink given at construction, on the shard
   * {@link ShardedBlockIndex#shardOf}{@code (rank, pollerThreads)}; see
   * {@link #subscribe(WorkerRank, int, String, String, BatchSink)}.
   */
  public void subscribe(WorkerRank rank, String endpoint, String replayEndpoint) {
    subscribe(rank, defaultShard(rank), endpoint, replayEndpoint, sink);
  }

  /**
   * Subscribes rank {@code rank}, whose blocks live on index shard {@code shard}, to the publisher
   * at {@code endpoint} ({@code tcp://host:port}, {@code ipc://...} or {@code inproc://...});
   * {@code replayEndpoint} is the engine's ROUTER, or null when it has none. Batches and resets go
   * to {@code sink} on the shard's poller thread. Subscribing again with the same endpoints and
   * sink keeps the subscription (and its cursor); otherwise the old one is closed and a fresh one
   * opened. A rank is subscribed under one shard at a time: unsubscribe it under the same shard.
   * Returns at once; the socket is opened on the shard's poller thread, and a host that does not
   * resolve there is retried, never reported here.
   *
   * @throws IllegalArgumentException for a malformed endpoint ({@link EndpointSyntax})
   * @throws IllegalStateException after {@link #close()}
   */
  public void subscribe(
      WorkerRank rank, int shard, String endpoint, String replayEndpoint, BatchSink sink) {
    Objects.requireNonNull(rank, "rank");
    Objects.requireNonNull(sink, "sink");
    checkEndpoint(endpoint, "endpoint");
    if (replayEndpoint != null) {
      checkEndpoint(replayEndpoint, "replayEndpoint");
    }
    if (closed.get()) {
      throw new IllegalStateException("KV-event ingest is closed");
    }
    loops[pollerOf(shard)].subscribe(rank, endpoint, replayEndpoint, sink);
  }

  /** Unsubscribes a rank subscribed with {@link #subscribe(WorkerRank, String, String)}. */
  public CompletableFuture<Void> unsubscribe(WorkerRank rank) {
    return unsubscribe(rank, defaultShard(rank), null);
  }

  /**
   * Unsubscribes {@code rank} (subscribed under {@code shard}): on the shard's poller thread,
   * closes its socket, then runs {@code afterClose} (nullable; e.g. removing the rank's blocks, so
   * that no batch already read can re-add them). The future completes there once both are done;
   * from then on the sink gets nothing more for this subscription. For a rank that is not
   * subscribed only {@code afterClose} runs.
   */
  public CompletableFuture<Void> unsubscribe(WorkerRank rank, int shard, Runnable afterClose) {
    return loops[pollerOf(shard)].unsubscribe(rank, afterClose);
  }

  /**
   * Runs {@code task} on the poller thread that owns {@code shard}, after the commands posted
   * before it; false (and the task dropped) once the ingest is closed.
   */
  public boolean execute(int shard, Runnable task) {
    return loops[pollerOf(shard)].post(task);
  }

  /** Whether the calling thread is the poller that owns {@code shard}. */
  public boolean isOwnerThread(int shard) {
    return loops[pollerOf(shard)].isOwnThread();
  }

  /** The poller ({@code kvselect-zmq-<i>}) that owns index shard {@code shard}. */
  public int pollerOf(int shard) {
    return Math.floorMod(shard, loops.length);
  }

  private int defaultShard(WorkerRank rank) {
    return ShardedBlockIndex.shardOf(rank, loops.length);
  }

  /**
   * A snapshot of every subscribed rank's counters, ordered by rank; after {@link #close()} the
   * ranks that were subscribed show {@link RankStats.State#CLOSED}.
   */
  public Map<WorkerRank, RankStats> stats() {
    Map<WorkerRank, RankStats> out = new TreeMap<>();
    for (PollerLoop loop : loops) {
      loop.sessions.forEach((rank, session) -> out.put(rank, session.stats()));
    }
    return out;
  }

  /**
   * Any thread: the ranks that are not connected to their publisher now, each with the
   * {@link System#nanoTime()} since which it has not been (a rank that never connected counts from
   * its subscription). Read from volatile fields written by the pollers and JeroMQ's I/O threads.
   */
  public Map<WorkerRank, Long> unreachableSince() {
    Map<WorkerRank, Long> out = new TreeMap<>();
    for (PollerLoop loop : loops) {
      loop.sessions.forEach(
          (rank, session) -> {
            long since = session.downSinceNanos();
            if (since != 0) {
              out.put(rank, since);
            }
          });
    }
    return out;
  }

  /**
   * Stops every thread and closes every socket and the JeroMQ context; waits up to a few seconds
   * per thread. Idempotent. Blocking: not for an event loop, and not from inside the sink.
   */
  @Override
  public void close() {
    for (PollerLoop loop : loops) {
      if (loop.isOwnThread()) {
        throw new IllegalStateException("close() called from a poller thread (inside the sink)");
      }
    }
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    boolean stopped = true;
    try {
      for (PollerLoop loop : loops) {
        stopped &= loop.stop(STOP_WAIT_MS);
      }
      stopped &= replays.stop(STOP_WAIT_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopped = false;
    }
    if (stopped) {
      context.close();
      LOG.info("KV-event ingest closed");
    } else {
      LOG.error(
          "KV-event ingest threads did not stop in time (a blocked sink?); context left open");
    }
  }

  private static void checkEndpoint(String endpoint, String name) {
    Objects.requireNonNull(endpoint, name);
    String problem = EndpointSyntax.problem(endpoint);
    if (problem != null) {
      throw new IllegalArgumentException(name + ": " + problem);
    }
  }
}
