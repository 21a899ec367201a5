package io.kvselect.core.service;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.RankLoad;
import io.kvselect.core.select.CostFunction;
import java.util.ArrayList;
import java.util.List;

/**
 * Read-only views of the service state: {@code /loads}, {@code /potential_loads},
 * {@code /overlap_scores} and {@code /dump}. Each call runs under the service lock and costs
 * O(ranks) (plus one index lookup, or the whole index for a dump).
 */
public final class Inspection {

  private final SelectionService service;

  Inspection(SelectionService service) {
    this.service = service;
  }

  /** Current load of every schedulable rank, per partition, optionally filtered. */
  public List<PartitionLoads> loads(String modelName, String routingGroup) {
    return service.inspect(reg -> {
      List<PartitionLoads> out = new ArrayList<>();
      for (Partition p : reg.partitions()) {
        if ((modelName != null && !modelName.equals(p.key.modelName()))
            || (routingGroup != null && !routingGroup.equals(p.key.routingGroup()))) {
          continue;
        }
        List<PotentialLoad> rows = new ArrayList<>();
        for (WorkerRank r : p.schedulableRanks()) {
          RankLoad l = p.load.load(r);
          rows.add(new PotentialLoad(r.workerId(), r.dpRank(), l.activePrefillTokens(), l.activeDecodeBlocks(),
              l.activeRequests()));
        }
        out.add(new PartitionLoads(p.key, rows, 0, 0));
      }
      return out;
    });
  }

  /** Load of every schedulable rank as if {@code req}'s prompt were added to it. */
  public List<PotentialLoad> potentialLoads(SelectRequest req) {
    return service.inspect(reg -> {
      Query q = query(reg, req);
      Partition p = q.partition();
      RouterConfig cfg = q.cfg();
      NormalizedPrompt np = q.prompt();
      OverlapScores scores = q.scores();
      List<PotentialLoad> out = new ArrayList<>();
      for (WorkerRank r : p.schedulableRanks()) {
        RankLoad l = p.load.load(r);
        long cached = CostFunction.effectiveCachedTokens(cfg, scores.of(r), p.blockSize);
        long prefill = l.activePrefillTokens()
            + (cfg.trackPrefillTokens() ? CostFunction.effectivePrefillTokens(np.isl(), cached) : 0);
        long decode = p.load.potentialDecodeBlocks(r, np.trackingHashes(), np.isl(), p.blockSize);
        out.add(new PotentialLoad(r.workerId(), r.dpRank(), prefill, decode, l.activeRequests()));
      }
      return out;
    });
  }

  /** Tiered overlap of a prompt with every schedulable rank. */
  public OverlapReport overlapScores(SelectRequest req) {
    return service.inspect(reg -> {
      Query q = query(reg, req);
      Partition p = q.partition();
      RouterConfig cfg = q.cfg();
      OverlapScores scores = q.scores();
      List<OverlapRow> rows = new ArrayList<>();
      for (WorkerRank r : p.schedulableRanks()) {
        RankOverlap o = scores.of(r);
        int diskExt = o.diskExtension() + o.externalExtension();
        double credit = cfg.overlapScoreCredit() * o.device() + cfg.hostCacheHitWeight() * o.hostExtension()
            + cfg.diskCacheHitWeight() * diskExt;
        rows.add(new OverlapRow(r.workerId(), r.dpRank(), o.device(), o.device() + o.hostExtension(),
            o.totalBlocks(), o.hostExtension(), diskExt, credit));
      }
      return new OverlapReport(p.blockSize, q.prompt().numBlocks(), rows);
    });
  }

  /** Every partition's indexed blocks, for {@code /dump} and peer recovery. */
  public List<PartitionDump> dump() {
    return service.inspect(reg -> {
      List<PartitionDump> out = new ArrayList<>();
      for (Partition p : reg.partitions()) {
        out.add(new PartitionDump(p.key, p.blockSize, p.primary.dump()));
      }
      return out;
    });
  }

  /** Number of indexed (rank, tier, block) entries over all partitions. */
  public long indexSize() {
    return service.inspect(reg -> {
      long n = 0;
      for (Partition p : reg.partitions()) {
        n += p.primary.size();
      }
      return n;
    });
  }

  /** A prompt query resolved against its partition: config, hashes and index overlap. */
  private record Query(Partition partition, RouterConfig cfg, NormalizedPrompt prompt, OverlapScores scores) {}

  private Query query(WorkerRegistry reg, SelectRequest req) {
    Partition p = ready(reg, req);
    RouterConfig cfg = service.settings().router().with(req.override());
    NormalizedPrompt np = PromptNormalizer.normalize(req.prompt(), p.blockSize, p.eagle, cfg.assumeKvReuse(), true,
        service.rng());
    return new Query(p, cfg, np, p.overlap(np.blockHashes()));
  }

  private static Partition ready(WorkerRegistry reg, SelectRequest req) {
    Partition p = reg.partition(req.partition());
    if (p == null || !p.ready()) {
      throw io.kvselect.core.error.SelectionException.notReady("no schedulable workers for " + req.partition());
    }
    return p;
  }
}
