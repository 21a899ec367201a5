package io.kvselect.tools.loadgen;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.events.RankStats;
import io.kvselect.tools.mock.KvEventEncoder;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.PublisherThread;
import io.kvselect.tools.mock.ReplayLayout;
import io.kvselect.tools.mock.WireFormat;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One benchmark set-up: an in-process kvselect node on 127.0.0.1 (ephemeral port) and
 * {@code publishers} mock vLLM publishers (one PUB and one replay ROUTER each, on ephemeral
 * loopback ports), each registered through {@code POST /workers} as its own single-rank worker
 * (ids 1..N, block size 16 by default), then connected: probe batches are published until every
 * rank has delivered one and has caught up with its publisher. The publishers' sockets live on
 * {@code publisherThreads} {@link PublisherThread}s (publisher {@code p} on thread
 * {@code p mod publisherThreads}), each with its own ZMQ context and one ZMQ I/O thread.
 *
 * <p>Every batch handed to a publisher is stamped in a {@link LagTracker} (see there for the lag
 * definition).
 *
 * <p>Threading: built, driven and closed by one thread (the benchmark's main thread), except
 * {@link #publish}, {@link #published} and {@link #lag}, which belong to the feeder thread while
 * one runs. Publisher {@code p} is worker {@code p + 1}, rank 0.
 */
final class IngestRig implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long CONNECT_TIMEOUT_MS = 60_000;

  /** Publish times kept per rank: 65,536 batches, over a minute of one rank's batches at 1 M blocks/s. */
  private static final int LAG_CAPACITY = 1 << 16;

  private final KvselectNode node;
  private final KvEventPublisher[] pubs;
  private final List<PublisherThread> threads = new ArrayList<>();
  private final LagTracker lag;
  private final WorkerRank[] ranks;
  private final Set<Long> publisherZmqThreads = new HashSet<>();

  private IngestRig(KvselectNode node, int publishers) {
    this.node = node;
    this.pubs = new KvEventPublisher[publishers];
    this.lag = new LagTracker(publishers, LAG_CAPACITY, 3_600);
    this.ranks = new WorkerRank[publishers];
    for (int p = 0; p < publishers; p++) {
      ranks[p] = new WorkerRank(p + 1L, 0);
    }
  }

  /**
   * Starts the node and the publishers ({@code publisherThreads} socket threads, at most one per
   * publisher), registers and connects them; closes all on failure.
   */
  static IngestRig start(int threads, int publishers, int publisherThreads, int blockSize)
      throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host", "127.0.0.1", "--port", "0", "--threads", Integer.toString(threads)
            },
            Map.of());
    KvselectNode node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(60, TimeUnit.SECONDS);
    IngestRig rig = new IngestRig(node, publishers);
    try {
      if (node.events() == null) {
        throw new IllegalStateException("the node does not ingest KV events (approximate mode)");
      }
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      KvEventPublisher.Endpoints[] eps = new KvEventPublisher.Endpoints[publishers];
      for (int t = 0; t < Math.min(publisherThreads, publishers); t++) {
        rig.threads.add(new PublisherThread("kvselect-bench-pub-" + t, 1));
      }
      for (int p = 0; p < publishers; p++) {
        rig.pubs[p] =
            new KvEventPublisher(
                rig.threads.get(p % rig.threads.size()),
                "127.0.0.1",
                new int[1],
                0,
                "",
                ReplayLayout.TOPIC);
        eps[p] = rig.pubs[p].ready().get(10, TimeUnit.SECONDS);
      }
      // before any registration the node has no ZMQ socket, so every ZMQ thread so far is a
      // publisher's
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (ThreadCpu.isZmqThread(t.getName())) {
          rig.publisherZmqThreads.add(t.getId());
        }
      }
      for (int p = 0; p < publishers; p++) {
        rig.register(http, p + 1L, blockSize, eps[p]);
      }
      rig.connect();
      return rig;
    } catch (Exception | Error e) {
      rig.close();
      throw e;
    }
  }

  private void register(
      HttpClient http, long workerId, int blockSize, KvEventPublisher.Endpoints ep)
      throws IOException, InterruptedException {
    Map<String, Object> w = new LinkedHashMap<>();
    w.put("worker_id", workerId);
    w.put("endpoint", "http://127.0.0.1:1");
    w.put("block_size", blockSize);
    w.put("kv_events_endpoint", ep.publishers().get(0));
    w.put("replay_endpoint", ep.replay());
    HttpRequest req =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + "/workers"))
            .timeout(Duration.ofSeconds(10))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(w)))
            .build();
    HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 201) {
      throw new IOException(
          "POST /workers for worker " + workerId + ": " + r.statusCode() + " " + r.body());
    }
  }

  /** Probes every rank until it has delivered a batch, then waits until all probes are delivered. */
  private void connect() throws InterruptedException {
    byte[] probe =
        KvEventEncoder.encode(
            new KvEventBatch(1.0, List.of(new BlockRemoved(new long[] {42}, "GPU", null, null)), 0),
            WireFormat.MAP);
    long deadline = System.currentTimeMillis() + CONNECT_TIMEOUT_MS;
    while (true) {
      Map<WorkerRank, RankStats> stats = events().stats();
      int waiting = 0;
      for (int p = 0; p < pubs.length; p++) {
        RankStats st = stats.get(ranks[p]);
        if (st == null || st.batches() == 0) {
          publish(p, probe);
          waiting++;
        }
      }
      if (waiting == 0 && caughtUp()) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(
            waiting
                + " of "
                + pubs.length
                + " ranks not connected after "
                + CONNECT_TIMEOUT_MS
                + " ms: "
                + stats);
      }
      Thread.sleep(50);
    }
  }

  /** True when every rank has delivered every batch published to it so far. */
  boolean caughtUp() {
    long[] seqs = deliveredSeqs();
    for (int p = 0; p < pubs.length; p++) {
      if (seqs[p] != lag.count(p) - 1) {
        return false;
      }
    }
    return true;
  }

  /** Feeder thread: queues {@code payload} on publisher {@code p}, stamping it for the lag. */
  void publish(int p, byte[] payload) {
    lag.published(p, System.nanoTime());
    pubs[p].publish(0, payload);
  }

  /** Feeder thread: batches queued on publisher {@code p} since start (probes included). */
  long published(int p) {
    return lag.count(p);
  }

  /** Feeder thread: the publish times of every batch handed over. */
  LagTracker lag() {
    return lag;
  }

  /** Batches queued on {@code p} but not yet written to its PUB socket by its thread. */
  long unsent(int p) {
    return lag.count(p) - 1 - pubs[p].lastSeq(0);
  }

  /**
   * Publisher {@code p}'s socket thread sends nothing until {@code released} counts down (at most
   * {@code max}); see {@link KvEventPublisher#stallUntil}.
   */
  void stall(int p, java.util.concurrent.CountDownLatch released, Duration max) {
    pubs[p].stallUntil(released, max);
  }

  /** Sequence number of the last batch each rank delivered to the coordinator (-1 before any). */
  long[] deliveredSeqs() {
    Map<WorkerRank, RankStats> stats = events().stats();
    long[] out = new long[pubs.length];
    for (int p = 0; p < pubs.length; p++) {
      RankStats st = stats.get(ranks[p]);
      out[p] = st == null ? -1 : st.lastSeq();
    }
    return out;
  }

  /** Per-publisher ingest counters, in publisher order (null for a rank the node does not list). */
  RankStats[] rankStats() {
    Map<WorkerRank, RankStats> stats = events().stats();
    RankStats[] out = new RankStats[pubs.length];
    for (int p = 0; p < pubs.length; p++) {
      out[p] = stats.get(ranks[p]);
    }
    return out;
  }

  long malformed(int p) {
    return events().malformedPayloads(ranks[p]);
  }

  /** Ids of the publishers' ZMQ I/O and reaper threads (the others belong to the node). */
  Set<Long> publisherZmqThreads() {
    return Set.copyOf(publisherZmqThreads);
  }

  int publishers() {
    return pubs.length;
  }

  KvEventsCoordinator events() {
    return node.events();
  }

  /** Closes the publishers and their threads, then the node; waits for each. */
  @Override
  public void close() {
    for (KvEventPublisher p : pubs) {
      if (p != null) {
        p.close();
      }
    }
    for (PublisherThread t : threads) {
      t.close();
    }
    try {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("node did not stop: " + e, e);
    }
  }
}
