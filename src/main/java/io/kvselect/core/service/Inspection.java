package io.kvselect.core.service;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.RankLoad;
import io.kvselect.core.select.CostFunction;
import java.util.ArrayList;
import java.util.List;

/**
 * Read-only views of the service state: {@code /loads}, {@code /potential_loads},
 * {@code /overlap_scores} and {@code /dump}. A view of one partition's load holds that
 * partition's lock for O(ranks); prompt hashing and event-index reads happen outside it. A dump
 * copies the event index under its shards' read locks only, so selections keep running.
 */
public final class Inspection {

  private final ServiceSettings settings;
  private final java.util.random.RandomGenerator rng;
  private final WorkerRegistry registry;

  Inspection(
      ServiceSettings settings, java.util.random.RandomGenerator rng, WorkerRegistry registry) {
    this.settings = settings;
    this.rng = rng;
    this.registry = registry;
  }

  /** Current load of every schedulable rank, per partition, optionally filtered. */
  public List<PartitionLoads> loads(String modelName, String routingGroup) {
    List<PartitionLoads> out = new ArrayList<>();
    for (Partition p : registry.partitions()) {
      if ((modelName != null && !modelName.equals(p.key.modelName()))
          || (routingGroup != null && !routingGroup.equals(p.key.routingGroup()))) {
        continue;
      }
      List<PotentialLoad> rows = new ArrayList<>();
      int pendingCount;
      long pendingIsl;
      synchronized (p.lock) {
        for (WorkerRank r : p.members().pool().ranks()) {
          RankLoad l = p.load.load(r);
          rows.add(
              new PotentialLoad(
                  r.workerId(),
                  r.dpRank(),
                  l.activePrefillTokens(),
                  l.activeDecodeBlocks(),
                  l.activeRequests()));
        }
        pendingCount = p.queue.size();
        pendingIsl = p.queue.pendingIslTokens();
      }
      out.add(new PartitionLoads(p.key, rows, pendingCount, pendingIsl));
    }
    return out;
  }

  /** Load of every schedulable rank as if {@code req}'s prompt were added to it. */
  public List<PotentialLoad> potentialLoads(SelectRequest req) {
    Query q = query(req);
    Partition p = q.partition();
    RouterConfig cfg = q.cfg();
    NormalizedPrompt np = q.prompt();
    List<PotentialLoad> out = new ArrayList<>();
    synchronized (p.lock) {
      Partition.Members m = SelectionFlow.current(p, q.members());
      OverlapScores scores = p.overlapLocked(np.blockHashes(), q.eventScores());
      int bs = m.blockSize();
      for (WorkerRank r : m.pool().ranks()) {
        RankLoad l = p.load.load(r);
        long cached = CostFunction.effectiveCachedTokens(cfg, scores.of(r), bs);
        long prefill =
            l.activePrefillTokens()
                + (cfg.load().trackPrefillTokens()
                    ? CostFunction.effectivePrefillTokens(np.isl(), cached)
                    : 0);
        long decode = p.load.potentialDecodeBlocks(r, np.trackingHashes(), np.isl(), bs);
        out.add(new PotentialLoad(r.workerId(), r.dpRank(), prefill, decode, l.activeRequests()));
      }
    }
    return out;
  }

  /** Tiered overlap of a prompt with every schedulable rank. */
  public OverlapReport overlapScores(SelectRequest req) {
    Query q = query(req);
    Partition p = q.partition();
    RouterConfig cfg = q.cfg();
    OverlapScores scores;
    Partition.Members m;
    synchronized (p.lock) {
      m = SelectionFlow.current(p, q.members());
      scores = p.overlapLocked(q.prompt().blockHashes(), q.eventScores());
    }
    List<OverlapRow> rows = new ArrayList<>();
    for (WorkerRank r : m.pool().ranks()) {
      RankOverlap o = scores.of(r);
      int diskExt = o.diskExtension() + o.externalExtension();
      double credit =
          cfg.cost().overlapScoreCredit() * o.device()
              + cfg.cost().hostCacheHitWeight() * o.hostExtension()
              + cfg.cost().diskCacheHitWeight() * diskExt;
      rows.add(
          new OverlapRow(
              r.workerId(),
              r.dpRank(),
              o.device(),
              o.device() + o.hostExtension(),
              o.totalBlocks(),
              o.hostExtension(),
              diskExt,
              credit));
    }
    return new OverlapReport(m.blockSize(), q.prompt().numBlocks(), rows);
  }

  /** Requests waiting in each partition's router queue, by policy class ("partition/class" keys). */
  public java.util.Map<String, Integer> queueDepths() {
    java.util.Map<String, Integer> out = new java.util.TreeMap<>();
    for (Partition p : registry.partitions()) {
      synchronized (p.lock) {
        p.queue.depthByClass().forEach((cls, n) -> out.put(p.key + "/" + cls, n));
      }
    }
    return out;
  }

  /** Every partition's indexed blocks, for {@code /dump} and peer recovery. */
  public List<PartitionDump> dump() {
    List<PartitionDump> out = new ArrayList<>();
    for (Partition p : registry.partitions()) {
      out.add(new PartitionDump(p.key, p.members().blockSize(), entries(p)));
    }
    return out;
  }

  private static List<StoredBlock> entries(Partition p) {
    if (p.approximate == null) {
      return p.primary.dump();
    }
    synchronized (p.lock) {
      return p.primary.dump();
    }
  }

  /** Number of indexed (rank, tier, block) entries over all partitions. */
  public long indexSize() {
    long n = 0;
    for (Partition p : registry.partitions()) {
      if (p.approximate == null) {
        n += p.primary.size();
      } else {
        synchronized (p.lock) {
          n += p.primary.size();
        }
      }
    }
    return n;
  }

  /** A prompt query resolved against its partition: config, hashes and event-index overlap. */
  private record Query(
      Partition partition,
      Partition.Members members,
      RouterConfig cfg,
      NormalizedPrompt prompt,
      OverlapScores eventScores) {}

  private Query query(SelectRequest req) {
    Partition p = registry.partition(req.partition());
    if (p == null || !p.members().ready()) {
      throw io.kvselect.core.error.SelectionException.notReady(
          "no schedulable workers for " + req.partition());
    }
    Partition.Members m = p.members();
    RouterConfig cfg = settings.router().with(req.override());
    NormalizedPrompt np =
        PromptNormalizer.normalize(
            req.prompt(), m.blockSize(), m.eagle(), cfg.load().assumeKvReuse(), true, rng);
    return new Query(p, m, cfg, np, p.eventOverlap(np.blockHashes()));
  }
}
