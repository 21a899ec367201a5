package io.kvselect.server.events;

import io.kvselect.core.index.WorkerRank;
import java.time.Clock;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
 * threads. The thread count does not grow with the number of ranks. A rank is placed on the
 * least-loaded poller when first subscribed and stays there. Every socket is created, used and
 * closed on its own thread; the public methods only post commands and never block on I/O.
 *
 * <p>Per rank, live messages {@code [topic][seq 8 B BE][payload]} go through a
 * {@link io.kvselect.core.events.SequenceCursor}: a first batch with seq &gt; 0 or a forward gap
 * is recovered from the rank's replay endpoint (DEALER; live batches are held meanwhile and
 * delivered after the replayed ones); a replay that cannot cover the range, a gap without a
 * replay endpoint and a backwards jump (publisher restart) produce {@link BatchSink#onReset}
 * before the next batch. Malformed messages are counted and dropped. The sink's threading
 * contract is described on {@link BatchSink}.
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
  private final Map<WorkerRank, PollerLoop> placement = new ConcurrentHashMap<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Starts the threads, with the system clock for {@code last_event_at}. */
  public KvEventIngest(KvEventIngestOptions options, BatchSink sink) {
    this(options, sink, Clock.systemUTC());
  }

  /** Starts the threads. */
  public KvEventIngest(KvEventIngestOptions options, BatchSink sink, Clock clock) {
    Objects.requireNonNull(sink, "sink");
    this.context = ZMQ.context(options.ioThreads());
    this.replays = new ReplayLoop(context, options);
    this.loops = IntStream.range(0, options.pollerThreads())
        .mapToObj(i -> new PollerLoop(i, context, options, sink, replays, clock))
        .toArray(PollerLoop[]::new);
    replays.start();
    for (PollerLoop loop : loops) {
      loop.start();
    }
    LOG.info("KV-event ingest started: {}", options);
  }

  /**
   * Subscribes rank {@code rank} to the publisher at {@code endpoint} ({@code tcp://host:port},
   * {@code ipc://...} or {@code inproc://...}); {@code replayEndpoint} is the engine's ROUTER, or
   * null when it has none. Subscribing again with the same endpoints keeps the subscription (and
   * its cursor); with different ones replaces it with a fresh one. Returns at once; the socket is
   * opened on the rank's poller thread.
   *
   * @throws IllegalArgumentException for an endpoint of another scheme
   * @throws IllegalStateException after {@link #close()}
   */
  public void subscribe(WorkerRank rank, String endpoint, String replayEndpoint) {
    Objects.requireNonNull(rank, "rank");
    checkEndpoint(endpoint, "endpoint");
    if (replayEndpoint != null) {
      checkEndpoint(replayEndpoint, "replayEndpoint");
    }
    if (closed.get()) {
      throw new IllegalStateException("KV-event ingest is closed");
    }
    placement.compute(rank, (r, current) -> {
      PollerLoop loop = current != null ? current : leastLoaded();
      if (current == null) {
        loop.assigned.incrementAndGet();
      }
      loop.subscribe(r, endpoint, replayEndpoint);
      return loop;
    });
  }

  /**
   * Unsubscribes {@code rank}. The future completes (on the rank's poller thread: chain with the
   * {@code *Async} methods) once its socket is closed; from then on the sink gets nothing more for
   * this subscription. Completes at once for a rank that is not subscribed.
   */
  public CompletableFuture<Void> unsubscribe(WorkerRank rank) {
    AtomicReference<CompletableFuture<Void>> result =
        new AtomicReference<>(CompletableFuture.completedFuture(null));
    placement.computeIfPresent(rank, (r, loop) -> {
      loop.assigned.decrementAndGet();
      result.set(loop.unsubscribe(r));
      return null;
    });
    return result.get();
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
      LOG.error("KV-event ingest threads did not stop in time (a blocked sink?); context left open");
    }
  }

  private PollerLoop leastLoaded() {
    return Arrays.stream(loops)
        .min(Comparator.comparingInt(l -> l.assigned.get()))
        .orElseThrow();
  }

  private static void checkEndpoint(String endpoint, String name) {
    Objects.requireNonNull(endpoint, name);
    if (!(endpoint.startsWith("tcp://") || endpoint.startsWith("ipc://")
        || endpoint.startsWith("inproc://"))) {
      throw new IllegalArgumentException(name + " must be tcp://, ipc:// or inproc://: " + endpoint);
    }
  }
}
