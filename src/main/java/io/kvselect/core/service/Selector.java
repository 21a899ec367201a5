package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.RankLoad;
import io.kvselect.core.select.Candidate;
import io.kvselect.core.select.CostFunction;
import io.kvselect.core.select.CostRequest;
import io.kvselect.core.select.PolicyContext;
import io.kvselect.core.select.SelectionConstraints;
import io.kvselect.core.select.SelectionPipeline;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.random.RandomGenerator;

/**
 * Runs the selection pipeline ({@link SelectionPipeline}: filters, then the partition's policy)
 * for one request inside a partition, turning ranks into candidates from the partition's overlap
 * and load, and builds the response fields. Stateless apart from its collaborators; the
 * partition-reading methods are called with the partition's lock held.
 */
final class Selector {

  /** Dynamo's assumed batch capacity of a worker that did not report max_num_batched_tokens. */
  static final long DEFAULT_PREFILL_CAPACITY = 10_000_000L;

  private final SelectionPipeline pipeline;
  private final RandomGenerator rng;

  Selector(SelectionPipeline pipeline, RandomGenerator rng) {
    this.pipeline = pipeline;
    this.rng = rng;
  }

  /**
   * The chosen rank with the per-rank overlap the decision used, the rank's active prefill load
   * when it was chosen (for advisory responses), the membership it was chosen from, and the other
   * filtered ranks best first as the policy ranks them.
   */
  record Choice(
      WorkerRank rank,
      OverlapScores overlap,
      long effectivePrefillTokens,
      long potentialDecodeBlocks,
      long activePrefillTokens,
      Partition.Members members,
      List<WorkerRank> alternatives) {}

  static SelectionConstraints constraints(SelectRequest req, WorkerRank bound) {
    return new SelectionConstraints(
        req.allowedWorkerIds(),
        req.requiredTaints(),
        req.pinnedWorker(),
        req.affinityTarget(),
        bound);
  }

  /** The filter stages: the ranks the request may land on (never empty: fails instead). */
  List<WorkerRank> filter(Partition.Members m, SelectRequest req, WorkerRank bound) {
    return pipeline.filter(m.pool(), constraints(req, bound));
  }

  /**
   * Filters, scores and picks. {@code eventScores} is the event index's overlap read before the
   * lock ({@link Partition#eventOverlap}). Caller holds {@code p.lock}.
   */
  Choice chooseLocked(
      Partition p,
      Partition.Members m,
      RouterConfig cfg,
      NormalizedPrompt np,
      SelectRequest req,
      WorkerRank bound,
      OverlapScores eventScores) {
    return chooseAmongLocked(p, m, cfg, np, req, filter(m, req, bound), eventScores);
  }

  /** Scores and picks among filtered {@code ranks}. Caller holds {@code p.lock}. */
  Choice chooseAmongLocked(
      Partition p,
      Partition.Members m,
      RouterConfig cfg,
      NormalizedPrompt np,
      SelectRequest req,
      List<WorkerRank> ranks,
      OverlapScores eventScores) {
    OverlapScores overlap = p.overlapLocked(np.blockHashes(), eventScores);
    boolean allDecode = true;
    for (WorkerRank r : ranks) {
      allDecode &= "decode".equals(m.schedulableWorker(r.workerId()).spec().routerHintWorkerType());
    }
    int bs = m.blockSize();
    CostRequest cr = new CostRequest(bs, np.isl(), cfg.load().trackPrefillTokens(), allDecode);
    SelectionPipeline.Decision d =
        pipeline.decide(
            ranks,
            r ->
                candidate(
                    p,
                    np,
                    overlap,
                    r,
                    m.schedulableWorker(r.workerId()),
                    req.preferredTaints(),
                    bs),
            new PolicyContext(cfg, cr, rng, req.effectiveSessionId()));
    Candidate c = d.chosen();
    long cached = CostFunction.effectiveCachedTokens(cfg, c.overlap(), bs);
    return new Choice(
        c.rank(),
        overlap,
        CostFunction.effectivePrefillTokens(np.isl(), cached),
        c.potentialDecodeBlocks(),
        c.activePrefillTokens(),
        m,
        d.otherRanks());
  }

  /**
   * The prompt's prefill on its best-cached rank among {@code ranks}: the cache-aware uncached
   * prefill the router queue's WSPT policy weighs. Caller holds {@code p.lock}.
   */
  static long bestUncachedLocked(
      Partition p,
      Partition.Members m,
      RouterConfig cfg,
      NormalizedPrompt np,
      List<WorkerRank> ranks,
      OverlapScores eventScores) {
    OverlapScores overlap = p.overlapLocked(np.blockHashes(), eventScores);
    long cached = 0;
    for (WorkerRank r : ranks) {
      cached =
          Math.max(cached, CostFunction.effectiveCachedTokens(cfg, overlap.of(r), m.blockSize()));
    }
    return CostFunction.effectivePrefillTokens(np.isl(), cached);
  }

  private static Candidate candidate(
      Partition p,
      NormalizedPrompt np,
      OverlapScores overlap,
      WorkerRank r,
      WorkerRecord w,
      Map<String, Double> preferredTaints,
      int bs) {
    boolean has = p.load.hasLoad(r);
    RankLoad l = p.load.load(r);
    long potential = p.load.potentialDecodeBlocks(r, np.trackingHashes(), np.isl(), bs);
    double taintWeight = 0;
    for (var e : preferredTaints.entrySet()) {
      if (w.spec().taints().contains(e.getKey())) {
        taintWeight += e.getValue();
      }
    }
    return new Candidate(
        r,
        overlap.of(r),
        has,
        l.activePrefillTokens(),
        potential,
        (int) l.activeRequests(),
        taintWeight);
  }

  /**
   * Effective prefill of a prompt on a given rank (explicit reservations without the value).
   * Caller holds {@code p.lock}.
   */
  static long effectivePrefillLocked(
      Partition p, RouterConfig cfg, NormalizedPrompt np, WorkerRank rank, int bs) {
    if (np.blockHashes() == null) {
      return np.isl();
    }
    OverlapScores o = p.overlapLocked(np.blockHashes(), p.eventOverlap(np.blockHashes()));
    long cached = CostFunction.effectiveCachedTokens(cfg, o.of(rank), bs);
    return CostFunction.effectivePrefillTokens(np.isl(), cached);
  }

  /** Builds the response of a selection (no lock needed: reads snapshots and the event index). */
  static Selection response(
      Partition p,
      RouterConfig cfg,
      NormalizedPrompt np,
      SelectRequest req,
      Choice c,
      String id,
      boolean booked,
      boolean track) {
    Partition.Members m = c.members();
    WorkerRecord w = m.schedulableWorker(c.rank().workerId());
    int bs = m.blockSize();
    OverlapSummary summary = summary(w, c.overlap(), bs);
    Long total = w.spec().totalKvBlocks();
    Boolean decodeBusy =
        cfg.load().decodeBusyThreshold() != null && total != null
            ? c.potentialDecodeBlocks() > cfg.load().decodeBusyThreshold() * total
            : null;
    WorkerLoad wl = null;
    if (req.advisory() && !booked) {
      long capacity =
          w.spec().maxNumBatchedTokens() != null
              ? w.spec().maxNumBatchedTokens()
              : DEFAULT_PREFILL_CAPACITY;
      long active = c.activePrefillTokens() + (track ? c.effectivePrefillTokens() : 0);
      Double threshold = cfg.load().prefillBusyThreshold();
      Boolean busy = threshold != null ? active > threshold * capacity : null;
      wl = new WorkerLoad(active, capacity, total, busy);
    }
    KvHint hint = booked ? KvHints.find(p, cfg, w, c, np, id) : null;
    return new Selection(
        id,
        booked,
        booked ? np.sequenceHashes() : null,
        np.isl(),
        track,
        p.key,
        w.workerId(),
        c.rank().dpRank(),
        w.spec().endpoint(),
        bs,
        summary,
        c.effectivePrefillTokens(),
        c.potentialDecodeBlocks(),
        decodeBusy,
        wl,
        hint,
        null,
        c.alternatives());
  }

  static OverlapSummary summary(WorkerRecord w, OverlapScores scores, int bs) {
    long gpu = 0;
    long cpu = 0;
    long disk = 0;
    TreeMap<Integer, Long> dp = new TreeMap<>();
    for (WorkerRank r : w.ranks()) {
      RankOverlap o = scores.of(r);
      long g = (long) o.device() * bs;
      long c = (long) (o.device() + o.hostExtension()) * bs;
      long d = (long) o.totalBlocks() * bs;
      gpu = Math.max(gpu, g);
      cpu = Math.max(cpu, c);
      disk = Math.max(disk, d);
      dp.put(r.dpRank(), g);
    }
    return new OverlapSummary(Math.max(gpu, Math.max(cpu, disk)), gpu, dp, cpu, disk);
  }
}
