package io.kvselect.server.events;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.events.EventApplier;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.events.KvEventDecoder;
import io.kvselect.core.events.MalformedEventException;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.catalog.CatalogListener;
import io.kvselect.core.service.SelectionService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one KV-event subscription per schedulable worker rank in step with the catalog, and turns
 * delivered payloads into index writes: decode, apply to the partition's event index (rank-sharded,
 * so ingest threads write concurrently), drop the rank's blocks on a reset.
 *
 * <p>Registration rules (Dynamo's "Worker Restarts"): a rank whose event and replay endpoints are
 * unchanged keeps its listener, watermark and blocks; a changed endpoint gets a fresh listener and
 * loses its blocks; a removed worker's listeners are stopped and its blocks removed.
 *
 * <p>Threading: catalog callbacks run under the service lock and only enqueue socket commands;
 * {@link #onBatch}/{@link #onReset} run on ingest threads, per rank in order.
 */
public final class KvEventsCoordinator implements CatalogListener, BatchSink {

  private static final Logger LOG = LoggerFactory.getLogger(KvEventsCoordinator.class);

  /** What a rank's batches are applied to, replaced whenever its registration changes. */
  record Target(long workerId, BlockIndex index, int blockSize, boolean eagle, int firstRank, int rankCount,
      Map<Integer, String> endpoints, String replayEndpoint) {

    boolean hasRank(int r) {
      return r >= firstRank && r < firstRank + rankCount;
    }
  }

  private final SelectionService service;
  private final KvEventIngest ingest;
  private final Map<Long, Target> targets = new ConcurrentHashMap<>();
  private final Map<Long, CompletableFuture<Void>> stopping = new ConcurrentHashMap<>();
  private final Map<WorkerRank, AtomicLong> malformed = new ConcurrentHashMap<>();
  private final LongAdder appliedBlocks = new LongAdder();
  private final LongAdder batches = new LongAdder();

  /** {@code ingestFactory} builds the transport that delivers to this coordinator. */
  public KvEventsCoordinator(SelectionService service, java.util.function.Function<BatchSink, KvEventIngest> ingestFactory) {
    this.service = service;
    this.ingest = ingestFactory.apply(this);
  }


  @Override
  public void workerUpserted(WorkerRecord previous, WorkerRecord current) {
    Target old = targets.get(current.workerId());
    Target next = current.schedulable() ? target(current) : null;
    List<CompletableFuture<Void>> stops = new ArrayList<>();
    if (old != null) {
      for (int i = 0; i < old.rankCount(); i++) {
        int r = old.firstRank() + i;
        boolean keep = next != null && next.index() == old.index() && next.hasRank(r)
            && Objects.equals(old.endpoints().get(r), next.endpoints().get(r))
            && Objects.equals(old.replayEndpoint(), next.replayEndpoint());
        if (!keep) {
          WorkerRank rank = new WorkerRank(old.workerId(), r);
          stops.add(ingest.unsubscribe(rank));
          old.index().removeRank(rank);
        }
      }
    }
    if (next == null) {
      targets.remove(current.workerId());
      trackStops(current.workerId(), stops);
      return;
    }
    targets.put(current.workerId(), next);
    for (int i = 0; i < next.rankCount(); i++) {
      int r = next.firstRank() + i;
      boolean running = old != null && old.index() == next.index() && old.hasRank(r)
          && Objects.equals(old.endpoints().get(r), next.endpoints().get(r))
          && Objects.equals(old.replayEndpoint(), next.replayEndpoint());
      if (!running) {
        ingest.subscribe(new WorkerRank(next.workerId(), r), next.endpoints().get(r), next.replayEndpoint());
      }
    }
    trackStops(current.workerId(), stops);
  }

  @Override
  public void workerRemoved(WorkerRecord removed) {
    Target old = targets.remove(removed.workerId());
    if (old == null) {
      return;
    }
    List<CompletableFuture<Void>> stops = new ArrayList<>();
    for (int i = 0; i < old.rankCount(); i++) {
      stops.add(ingest.unsubscribe(new WorkerRank(old.workerId(), old.firstRank() + i)));
    }
    BlockIndex index = old.index();
    CompletableFuture<Void> all = CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new))
        .whenComplete((v, e) -> index.clearWorker(removed.workerId()));
    stopping.put(removed.workerId(), all);
    all.whenComplete((v, e) -> stopping.remove(removed.workerId(), all));
  }

  private void trackStops(long workerId, List<CompletableFuture<Void>> stops) {
    if (!stops.isEmpty()) {
      CompletableFuture<Void> all = CompletableFuture.allOf(stops.toArray(CompletableFuture[]::new));
      stopping.put(workerId, all);
      all.whenComplete((v, e) -> stopping.remove(workerId, all));
    }
  }

  /** Completes once every listener stopped for {@code workerId} is closed and its blocks are gone. */
  public CompletableFuture<Void> settled(long workerId) {
    CompletableFuture<Void> f = stopping.get(workerId);
    return f == null ? CompletableFuture.completedFuture(null) : f;
  }

  private Target target(WorkerRecord w) {
    var s = w.spec();
    Map<Integer, String> endpoints = new java.util.HashMap<>();
    for (WorkerRank r : w.ranks()) {
      endpoints.put(r.dpRank(), s.kvEventsEndpointFor(r.dpRank()));
    }
    return new Target(w.workerId(), service.eventIndex(s.partition()), s.blockSize(), s.isEagle(),
        s.dataParallelStartRank(), s.dataParallelSize(), Map.copyOf(endpoints), s.replayEndpoint());
  }

  @Override
  public void onBatch(WorkerRank rank, long seq, byte[] payload) {
    Target t = targets.get(rank.workerId());
    if (t == null || t.index() == null) {
      return;
    }
    KvEventBatch batch;
    try {
      batch = KvEventDecoder.decode(payload);
    } catch (MalformedEventException e) {
      malformed.computeIfAbsent(rank, k -> new AtomicLong()).incrementAndGet();
      LOG.debug("dropped malformed batch {} of {}: {}", seq, rank, e.getMessage());
      return;
    }
    WorkerRank target = rank;
    if (batch.dpRank() != null && batch.dpRank() != rank.dpRank()) {
      if (!t.hasRank(batch.dpRank())) {
        malformed.computeIfAbsent(rank, k -> new AtomicLong()).incrementAndGet();
        return;
      }
      target = new WorkerRank(rank.workerId(), batch.dpRank());
    }
    var stats = EventApplier.apply(t.index(), target, t.blockSize(), t.eagle(), batch);
    appliedBlocks.add(stats.storedBlocks() + stats.removedBlocks());
    batches.increment();
  }

  @Override
  public void onReset(WorkerRank rank, String reason) {
    Target t = targets.get(rank.workerId());
    if (t != null && t.index() != null) {
      LOG.info("dropping the blocks of {}: {}", rank, reason);
      t.index().removeRank(rank);
    }
  }

  /** Per-rank listener state with this coordinator's count of undecodable payloads. */
  public Map<WorkerRank, RankStats> stats() {
    return ingest.stats();
  }

  public long malformedPayloads(WorkerRank rank) {
    AtomicLong n = malformed.get(rank);
    return n == null ? 0 : n.get();
  }

  /** Blocks stored or removed through events since start (for metrics and benchmarks). */
  public long appliedBlocks() {
    return appliedBlocks.sum();
  }

  public long batches() {
    return batches.sum();
  }
}
